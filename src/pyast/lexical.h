// kiln/pyast: checks Python's tokenizer makes that tree-sitter's grammar does not.
//
// tree-sitter accepts some sources CPython rejects before parsing, and reports others at a place
// other than where Python does. These scans run over the text with a small tokenizer of their own
// (strings, comments, brackets, line continuations), iteratively and in linear time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::pyast {

struct LexicalError {
  uint32_t byte = 0;  // where Python points
  std::string message;
  bool tab_error = false;  // a TabError (inconsistent tabs and spaces), not a bracket problem
  bool unclosed = false;   // a bracket never closed (Python reports it only past the bracket's line)
};

// Indentation Python's tokenizer rejects, the first such line: a TabError (indentation whose meaning
// depends on the tab size, compared with tabs of 8 and of 1 columns as CPython does; pointed at the
// line's start), an unexpected indent (pointed at the last character of the indentation), or no
// indented block after a line ending with ':' (pointed at the line's first token). The message
// starts with the error's Python name.
std::optional<LexicalError> FindIndentError(std::string_view text);

// Unbalanced brackets the way Python reports them: "'(' was never closed" at the innermost bracket
// still open at the end of the text, "unmatched ')'" and "closing parenthesis ']' does not match
// opening parenthesis '('" at the closing one.
std::optional<LexicalError> FindBracketError(std::string_view text);

// CPython's tokenizer allows at most 200 brackets open at once (MAXLEVEL); the first bracket past them
// is "too many nested parentheses". Checked before tree-sitter parses: its error recovery on hundreds of
// thousands of unclosed brackets frees an invalid pointer (libtree-sitter 0.20.7; a fuzzed mutant killed
// `kiln analyze`), and no valid Python nests that deep.
inline constexpr int kMaxBracketDepth = 200;
std::optional<LexicalError> FindTooManyNestedBrackets(std::string_view text, int limit = kMaxBracketDepth);

// The text with every comment's bytes (outside strings) replaced by spaces: the same length, lines and
// spans, no comment tokens (see Tree::kForkParseBytes).
std::string BlankComments(std::string_view text);

}  // namespace kiln::pyast
