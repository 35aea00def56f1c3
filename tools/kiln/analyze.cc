// `kiln analyze FILE... [--json]`: static model of every @triton.jit kernel and launch site.
// Argument handling only; the work is in src/analysis (driver.h).
#include <cstdio>

#include "analysis/driver.h"
#include "commands.h"
#include "common/diag.h"
#include "common/json_dump.h"

namespace kiln::cli {

namespace {

Command RegisterAnalyze(CLI::App& app) {
  auto* sub = app.add_subcommand("analyze", "Static model of every @triton.jit kernel and launch site");
  auto files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("files", *files, "Python files")->required();
  sub->add_flag("--json", *json, "Print JSON (schema: docs/analyze.md)");
  return {sub, [files, json]() {
            int rc = 0;
            std::vector<analysis::FileReport> reports;
            for (const auto& f : *files) {
              analysis::FileReport r = analysis::AnalyzeFile(f);
              // Errors go to stderr as they are found; the other files are still analyzed.
              for (const auto& d : r.diagnostics) std::fputs(FormatDiagnostic(d).c_str(), stderr);
              if (!r.ok()) rc = 1;
              if (!*json && r.model) {
                if (!reports.empty()) std::fputs("\n", stdout);
                std::fputs(analysis::FormatSummary(*r.model).c_str(), stdout);
              }
              reports.push_back(std::move(r));
            }
            if (*json) std::printf("%s\n", DumpJson(analysis::ReportsToJson(reports), 2).c_str());
            return rc;
          }};
}

Registrar reg(10, RegisterAnalyze);

}  // namespace

}  // namespace kiln::cli
