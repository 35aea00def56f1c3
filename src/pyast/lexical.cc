#include "pyast/lexical.h"

#include <vector>

namespace kiln::pyast {
namespace {

// Walks the text the way Python's tokenizer splits it: calls `line_start(byte, after_colon)` at the
// start of every physical line that begins a logical line (not inside brackets, strings, or after a
// backslash continuation; `after_colon`: the previous logical line ended with ':'), `open(byte)` / `close(byte)` at
// brackets outside strings and comments. A callback returning false stops the scan.
template <class LineStart, class Open, class Close, class Comment>
void Scan(std::string_view t, LineStart&& line_start, Open&& open, Close&& close, Comment&& comment) {
  size_t i = 0, n = t.size();
  int level = 0;
  bool at_line_start = true;
  char last = 0;             // the last character of code (not comment or space) seen
  bool after_colon = false;  // the previous logical line ended with ':' (a block must follow)
  while (i < n) {
    if (at_line_start) {
      at_line_start = false;
      if (level == 0 && !line_start(i, after_colon)) return;
    }
    char c = t[i];
    if (c == '#') {
      size_t b = i;
      while (i < n && t[i] != '\n') ++i;
      comment(b, i);
      continue;
    }
    if (c == '\\' && i + 1 < n && (t[i + 1] == '\n' || t[i + 1] == '\r')) {
      i += 2;
      if (i < n && t[i - 1] == '\r' && t[i] == '\n') ++i;
      continue;  // a continuation: the next line does not start a logical line
    }
    if (c == '\n') {
      ++i;
      at_line_start = true;
      // A blank or comment-only line leaves `last` as it was: the block opener stays pending.
      if (level == 0 && last != 0) after_colon = last == ':', last = 0;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\r' && c != '\f') last = c;
    if (c == '\'' || c == '"') {
      bool triple = i + 2 < n && t[i + 1] == c && t[i + 2] == c;
      i += triple ? 3 : 1;
      while (i < n) {
        if (t[i] == '\\') {
          i += 2;
          continue;
        }
        if (!triple && t[i] == '\n') break;  // unterminated: the parser reports it
        if (t[i] == c && (!triple || (i + 2 < n && t[i + 1] == c && t[i + 2] == c))) {
          i += triple ? 3 : 1;
          break;
        }
        ++i;
      }
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      ++level;
      if (!open(i)) return;
    } else if (c == ')' || c == ']' || c == '}') {
      if (level > 0) --level;
      if (!close(i)) return;
    }
    ++i;
  }
}

char Opener(char close) { return close == ')' ? '(' : close == ']' ? '[' : '{'; }

}  // namespace

std::optional<LexicalError> FindIndentError(std::string_view text) {
  std::optional<LexicalError> err;
  std::vector<int> cols{0}, altcols{0};
  auto line_start = [&](size_t at, bool after_colon) {
    int col = 0, altcol = 0;
    size_t i = at;
    for (; i < text.size(); ++i) {
      if (text[i] == ' ')
        ++col, ++altcol;
      else if (text[i] == '\t')
        col = (col / 8 + 1) * 8, altcol = altcol + 1;
      else if (text[i] == '\f')
        col = altcol = 0;
      else
        break;
    }
    if (i >= text.size() || text[i] == '#' || text[i] == '\n' || text[i] == '\r') return true;  // blank line
    uint32_t first = static_cast<uint32_t>(i);
    // The tokenizer's TabError comes before the parser's block errors.
    bool tab = col == cols.back() ? altcol != altcols.back() : col > cols.back() && altcol <= altcols.back();
    if (!tab && after_colon && col <= cols.back()) {
      err = LexicalError{first, "IndentationError: expected an indented block", false};
      return false;
    }
    if (!tab && !after_colon && col > cols.back()) {  // Python points at the last character of the indentation
      err = LexicalError{first - 1, "IndentationError: unexpected indent", false};
      return false;
    }
    bool bad = false;
    if (col == cols.back()) {
      bad = altcol != altcols.back();
    } else if (col > cols.back()) {
      bad = altcol <= altcols.back();
      cols.push_back(col), altcols.push_back(altcol);
    } else {
      while (cols.size() > 1 && col < cols.back()) cols.pop_back(), altcols.pop_back();
      if (col != cols.back()) return false;  // an IndentationError the parser reports
      bad = altcol != altcols.back();
    }
    if (bad)
      err =
          LexicalError{static_cast<uint32_t>(at), "TabError: inconsistent use of tabs and spaces in indentation", true};
    return !bad;
  };
  Scan(
      text, line_start, [](size_t) { return true; }, [](size_t) { return true; }, [](size_t, size_t) {});
  return err;
}

std::optional<LexicalError> FindBracketError(std::string_view text) {
  std::optional<LexicalError> err;
  std::vector<size_t> open;
  auto on_open = [&](size_t at) {
    open.push_back(at);
    return true;
  };
  auto on_close = [&](size_t at) {
    char c = text[at];
    if (open.empty()) {
      err = LexicalError{static_cast<uint32_t>(at), std::string("unmatched '") + c + "'"};
      return false;
    }
    if (text[open.back()] != Opener(c)) {
      err = LexicalError{static_cast<uint32_t>(at), std::string("closing parenthesis '") + c +
                                                        "' does not match opening parenthesis '" + text[open.back()] +
                                                        "'"};
      return false;
    }
    open.pop_back();
    return true;
  };
  Scan(
      text, [](size_t, bool) { return true; }, on_open, on_close, [](size_t, size_t) {});
  if (!err && !open.empty())
    err = LexicalError{static_cast<uint32_t>(open.back()), std::string("'") + text[open.back()] + "' was never closed",
                       false, true};
  return err;
}

std::optional<LexicalError> FindTooManyNestedBrackets(std::string_view text, int limit) {
  std::optional<LexicalError> err;
  int level = 0;
  auto on_open = [&](size_t at) {
    if (++level <= limit) return true;
    err = LexicalError{static_cast<uint32_t>(at), "too many nested parentheses"};
    return false;
  };
  auto on_close = [&](size_t) {
    if (level > 0) --level;
    return true;
  };
  Scan(
      text, [](size_t, bool) { return true; }, on_open, on_close, [](size_t, size_t) {});
  return err;
}

std::string BlankComments(std::string_view text) {
  std::string out(text);
  Scan(
      text, [](size_t, bool) { return true; }, [](size_t) { return true; }, [](size_t) { return true; },
      [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i)
          if (out[i] != '\r') out[i] = ' ';
      });
  return out;
}

}  // namespace kiln::pyast
