// kiln/common: user-facing diagnostics in the LLVM/Ninja style.
//
//   file.py:12:5: error: lower-case message
//       x = tl.load(ptr
//       ^
//
// Roadmap: one formatter for every module; locations are 1-based lines and columns (bytes).
#pragma once

#include <string>
#include <string_view>

namespace kiln {

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;  // may be empty
  int line = 0;      // 1-based; 0 when there is no location
  int column = 0;    // 1-based byte column; 0 when unknown
  std::string message;
  std::string source_line;  // the offending line of source, shown with a caret when non-empty
};

// Formats "file:line:col: error: message" plus the source line and a caret where known.
std::string FormatDiagnostic(const Diagnostic& d);

// Returns the 1-based line `line` of `text` (without its newline), or "" if out of range.
std::string_view LineOf(std::string_view text, int line);

const char* SeverityName(Severity s);

}  // namespace kiln
