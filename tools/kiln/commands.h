// Subcommand registry for the kiln CLI. Each subcommand file defines one Register<Name>() that
// adds its CLI11 subcommand and returns the function that runs it.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace kiln::cli {

struct Command {
  CLI::App* sub;
  std::function<int()> run;
};
using CommandList = std::vector<Command>;

Command RegisterAnalyze(CLI::App& app);

inline void RegisterAll(CLI::App& app, CommandList& out) {
  out.push_back(RegisterAnalyze(app));
}

}  // namespace kiln::cli
