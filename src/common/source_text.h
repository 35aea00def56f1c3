// kiln/common: the one decoding policy for Python source text kiln reads (PEP 263, PEP 3120).
//
// Every module that takes Python source (analyze, task loading, candidates, baselines) gets its text
// through DecodePythonSource (pyast::Tree::Parse applies it too), so everything downstream holds
// valid UTF-8 without NUL bytes:
//   - a UTF-8 byte-order mark is accepted and removed (with a coding line, that line must say utf-8);
//   - a `coding:` declaration on line 1 (or line 2 under a comment-only first line) is honoured:
//     latin-1, cp1252, ... are converted to UTF-8 with iconv, and the declaration is rewritten to
//     say utf-8 so that Python reading the converted text decodes it the same way;
//   - without one the text must be UTF-8 (strictly: no overlong forms, no surrogates);
//   - an undecodable byte, an unknown encoding or a NUL byte is an error with the line and column
//     (1-based, bytes of the file as read) where it is: `file:line:col: error: ...`.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace kiln {

struct DecodedSource {
  bool ok = false;
  std::string text;      // UTF-8 (when ok)
  std::string encoding;  // the encoding the bytes were read as: "utf-8", "iso-8859-1", "cp1252", ...
  // When !ok: where and what (line/column 1-based, in the bytes given; 0 when the file as a whole).
  int line = 0;
  int column = 0;
  std::string error;
};

DecodedSource DecodePythonSourceDetailed(std::string_view bytes);

// The decoded text, or InvalidArgument "path:line:col: error: message".
Result<std::string> DecodePythonSource(std::string_view bytes, const std::string& path);

// ReadFile + DecodePythonSource (file errors as ReadFile reports them).
Result<std::string> ReadPythonSource(const std::string& path);

// True when `s` is valid UTF-8 (strict) without NUL bytes; else `*offset` is the first bad byte.
bool IsCleanUtf8(std::string_view s, size_t* offset = nullptr);

}  // namespace kiln
