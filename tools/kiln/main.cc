// kiln CLI entry point. Subcommands register themselves (see commands.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>

#include "commands.h"
#include "common/children.h"
#include "flags.h"

int main(int argc, char** argv) {
#ifndef __SANITIZE_ADDRESS__
  kiln::cli::InstallCrashReporter();  // sanitizer builds keep the sanitizers' own reports
#endif
  // Test hook for the crash reporter (tests/cli): KILN_DEBUG_CRASH=segv|abort.
  if (const char* c = std::getenv("KILN_DEBUG_CRASH")) {
    if (std::string(c) == "segv") std::raise(SIGSEGV);
    if (std::string(c) == "abort") std::abort();
  }
  CLI::App app{"kiln: make Triton GPU kernels fast and trustworthy"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  auto& regs = kiln::cli::Registry();
  std::stable_sort(regs.begin(), regs.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  std::vector<kiln::cli::Command> commands;
  for (auto& r : regs) commands.push_back(r.fn(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return kiln::cli::ExitForParseError(app, e);  // usage errors: exit 2
  }
  // An interrupted kiln (Ctrl-C, a CI job's timeout) kills every child tree it started before it exits:
  // workers, candidates and ncu lead process groups of their own, out of reach of the terminal's signal.
  kiln::InstallChildCleanupOnSignal();
  for (auto& c : commands) {
    if (c.sub->parsed()) return c.run();
  }
  return 2;
}
