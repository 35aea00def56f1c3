// kiln/search: the optimize report as terminal text, JSON (OptimizeResult::ToJson) and HTML.
#pragma once

#include <string>

#include "search/loop.h"

namespace kiln::search {

// Summary for the terminal: verdict line, per-case table (baseline, best, speedup with spread),
// roofline before/after, findings before/after, the candidates tried (top `max_rows` by time).
std::string FormatReportText(const OptimizeResult& r, int max_rows = 20);
// A self-contained HTML page (no external assets) with the same content and every candidate.
std::string FormatReportHtml(const OptimizeResult& r);

}  // namespace kiln::search
