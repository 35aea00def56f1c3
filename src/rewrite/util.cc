// kiln/rewrite: helpers shared by the rewrites (text and edits).
#include <fmt/format.h>
#include <algorithm>
#include <charconv>

#include "rewrite/internal.h"

namespace kiln::rewrite::internal {

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string ReindentBlock(std::string_view block, const std::string& extra) {
  std::string out;
  bool at_line_start = true;
  for (char c : block) {
    if (at_line_start && c != '\n') out += extra;
    out += c;
    at_line_start = (c == '\n');
  }
  return out;
}

Status AppendArg(EditSet& edits, std::string_view text, const Span& args_span, const std::string& kw) {
  uint32_t close = args_span.end.byte;
  if (close == 0 || text[close - 1] != ')') return Internal("argument list does not end with ')'");
  uint32_t p = close - 1;
  uint32_t q = p;
  while (q > args_span.begin.byte && std::isspace(static_cast<unsigned char>(text[q - 1]))) --q;
  char prev = text[q - 1];
  if (prev == '(') return edits.Insert(p, kw);
  if (prev == ',') return edits.Insert(q, " " + kw + ",");
  return edits.Insert(q, ", " + kw);
}

Status RemoveArgs(EditSet& edits, const std::vector<Span>& spans, const std::vector<bool>& remove) {
  size_t n = spans.size();
  size_t first_kept = 0;
  while (first_kept < n && remove[first_kept]) ++first_kept;
  if (first_kept == n) {
    if (n) KILN_RETURN_IF_ERROR(edits.Replace(spans[0].begin.byte, spans[n - 1].end.byte, ""));
    return Status::Ok();
  }
  if (first_kept > 0) KILN_RETURN_IF_ERROR(edits.Replace(spans[0].begin.byte, spans[first_kept].begin.byte, ""));
  for (size_t i = first_kept + 1; i < n; ++i)
    if (remove[i]) KILN_RETURN_IF_ERROR(edits.Replace(spans[i - 1].end.byte, spans[i].end.byte, ""));
  return Status::Ok();
}

Span GridEditSpan(std::string_view text, const Launch& l) {
  Span s = l.grid.expr.span;
  uint32_t e = s.end.byte;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t' || text[e] == '\n' || text[e] == '\r')) ++e;
  if (e < text.size() && text[e] == ',') s.end.byte = e + 1;  // (line/column of the end unchanged)
  return s;
}

bool GridIsBareTuple(std::string_view text, const Launch& l) {
  if (l.grid.kind != analysis::GridKind::kTuple) return false;
  if (GridEditSpan(text, l).end.byte != l.grid.expr.span.end.byte) return true;
  int depth = 0;
  for (char ch : l.grid.expr.text) {
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == ')' || ch == ']' || ch == '}') --depth;
    if (ch == ',' && depth == 0) return true;
  }
  return false;
}

std::string ValueText(int64_t v, bool boolean) {
  if (boolean) return v ? "True" : "False";
  return std::to_string(v);
}

}  // namespace kiln::rewrite::internal
