// kiln/analysis: JSON serialisation of the module model (schema documented in docs/analyze.md).
//
// The JSON is versioned: the top-level object carries "schema_version": kSchemaVersion. Spans are
// objects {"line", "col", "end_line", "end_col", "begin", "end"} (1-based lines and byte columns,
// byte offsets begin/end with end exclusive). Absent optional values are omitted.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/model.h"

namespace kiln::analysis {

nlohmann::json SpanToJson(const Span& s);
nlohmann::json KernelToJson(const Kernel& k);
nlohmann::json LaunchToJson(const Launch& l);
// {"schema_version": 1, "path": ..., "kernels": [...], "launches": [...], ...}
nlohmann::json ModuleToJson(const ModuleModel& m);

}  // namespace kiln::analysis
