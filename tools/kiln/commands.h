// Subcommand registry for the kiln CLI. Each subcommand file registers itself with a static
// Registrar, so adding a subcommand is adding one file:
//
//   static kiln::cli::Registrar reg(50, [](CLI::App& app) -> kiln::cli::Command { ... });
//
// `order` sorts the subcommands in --help. No logic beyond argument handling lives in tools/kiln:
// a subcommand registers its flags into an options struct of src/app and makes one call into src/app.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace kiln::cli {

struct Command {
  CLI::App* sub;
  std::function<int()> run;
};

using RegisterFn = std::function<Command(CLI::App&)>;

struct Registration {
  int order;
  RegisterFn fn;
};

inline std::vector<Registration>& Registry() {
  static std::vector<Registration> r;
  return r;
}

struct Registrar {
  Registrar(int order, RegisterFn fn) { Registry().push_back({order, std::move(fn)}); }
};

// Prints a backtrace on a fatal signal (crash.cc).
void InstallCrashReporter();

}  // namespace kiln::cli
