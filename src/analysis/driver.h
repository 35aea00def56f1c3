// kiln/analysis: per-file driver for `kiln analyze` (read, parse, check, analyze, format).
//
// AnalyzeFile never fails as a whole: every problem with a file (missing, a directory, unreadable,
// not Python, syntax errors, no kernels) becomes a Diagnostic in the report, so callers can go on
// with the other files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "common/diag.h"

namespace kiln::analysis {

struct FileReport {
  std::string path;
  std::optional<ModuleModel> model;     // set when the file was analyzed
  std::vector<Diagnostic> diagnostics;  // errors (and notes) about the file
  bool ok() const { return model.has_value() && diagnostics.empty(); }
};

FileReport AnalyzeFile(const std::string& path);
// Same, for text already in memory (`path` is used in messages).
FileReport AnalyzeText(std::string text, const std::string& path);

// Human-readable summary of one module: one block per kernel, one per launch site.
std::string FormatSummary(const ModuleModel& m);

// {"schema_version": 1, "modules": [...], "errors": [{"file", "line", "col", "message"}]}
nlohmann::json ReportsToJson(const std::vector<FileReport>& reports);

}  // namespace kiln::analysis
