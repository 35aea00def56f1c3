#include "common/diag.h"

#include <fmt/format.h>

namespace kiln {

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

std::string_view LineOf(std::string_view text, int line) {
  if (line < 1) return {};
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string_view l = text.substr(start, end - start);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

std::string FormatDiagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.file.empty()) {
    out += d.file;
    if (d.line > 0) {
      out += fmt::format(":{}", d.line);
      if (d.column > 0) out += fmt::format(":{}", d.column);
    }
    out += ": ";
  }
  out += fmt::format("{}: {}\n", SeverityName(d.severity), d.message);
  if (!d.source_line.empty() && d.column > 0) {
    out += "    " + d.source_line + "\n";
    std::string pad;
    // Keep tabs so the caret lines up under the source text.
    for (int i = 0; i + 1 < d.column && i < static_cast<int>(d.source_line.size()); ++i) {
      pad += d.source_line[i] == '\t' ? '\t' : ' ';
    }
    out += "    " + pad + "^\n";
  }
  return out;
}

}  // namespace kiln
