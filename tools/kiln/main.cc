// kiln CLI entry point: registers one subcommand per file (analyze.cc, eval.cc, ...).
// No logic beyond argument handling lives in tools/kiln.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: make Triton GPU kernels fast and trustworthy"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  kiln::cli::CommandList commands;
  kiln::cli::RegisterAll(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& c : commands) {
    if (c.sub->parsed()) return c.run();
  }
  return 2;
}
