// `kiln analyze FILE... [--json]`: static model of Triton modules (placeholder until src/analysis lands).
#include <cstdio>

#include "commands.h"
#include "common/diag.h"
#include "pyast/pyast.h"

namespace kiln::cli {

namespace {

Command RegisterAnalyze(CLI::App& app) {
  auto* sub = app.add_subcommand("analyze", "Static model of every @triton.jit kernel and launch site");
  auto files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("files", *files, "Python files")->required();
  sub->add_flag("--json", *json, "Print JSON");
  return {sub, [files, json]() {
            int rc = 0;
            for (const auto& f : *files) {
              auto t = pyast::Tree::ParseFile(f);
              if (!t.ok()) {
                std::fprintf(stderr, "%s\n", t.status().message().c_str());
                rc = 1;
                continue;
              }
              for (const auto& e : (*t)->errors()) {
                std::fputs(FormatDiagnostic((*t)->MakeDiagnostic(e.span, e.message)).c_str(), stderr);
                rc = 1;
              }
            }
            return rc;
          }};
}

Registrar reg(10, RegisterAnalyze);

}  // namespace

}  // namespace kiln::cli
