// kiln/pyast: syntax helpers (see syntax.h).
#include "pyast/syntax.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kiln::pyast {

uint32_t LineStart(std::string_view text, uint32_t byte) {
  while (byte > 0 && text[byte - 1] != '\n') --byte;
  return byte;
}

uint32_t LineEnd(std::string_view text, uint32_t byte) {
  while (byte < text.size() && text[byte] != '\n') ++byte;
  return byte;
}

std::string IndentOf(std::string_view text, uint32_t byte) {
  uint32_t b = LineStart(text, byte), e = b;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t')) ++e;
  return std::string(text.substr(b, e - b));
}

std::string_view Prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // s[n] continues a character
  return s.substr(0, n);
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::optional<int64_t> ParseIntLiteral(std::string_view s) {
  std::string t = Trim(s);
  if (t == "True") return 1;
  if (t == "False") return 0;
  std::string d;
  for (char c : t)
    if (c != '_') d += c;
  if (d.empty()) return std::nullopt;
  int64_t v = 0;
  const char* b = d.data();
  const char* e = d.data() + d.size();
  bool neg = false;
  if (*b == '-') {
    neg = true;
    ++b;
  }
  int base = 10;
  if (e - b > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) {
    base = 16;
    b += 2;
  }
  auto r = std::from_chars(b, e, v, base);
  if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
  return neg ? -v : v;
}

bool CalleeIs(std::string_view f, std::string_view name) {
  return f == name ||
         (f.size() > name.size() && f.substr(f.size() - name.size()) == name && f[f.size() - name.size() - 1] == '.');
}

Node NodeAtBytes(const Tree& tree, uint32_t begin, uint32_t end) {
  Node n = tree.root();
  for (;;) {
    Node next;
    for (const Node& c : n.named_children()) {
      Span s = c.span();
      if (s.begin.byte <= begin && s.end.byte >= end) {
        next = c;
        break;
      }
    }
    if (next.is_null()) return n;  // the innermost named node covering the range
    n = next;
  }
}

Node NodeAt(const Tree& tree, const Span& span) { return NodeAtBytes(tree, span.begin.byte, span.end.byte); }

namespace {

// Identifiers below `n` that name values, in source order. The attribute name after '.' and a keyword
// argument's name are skipped at their parent, not by asking each identifier for its parent: tree-sitter
// finds a parent by descending from the root, which made this quadratic in the depth of long chains.
void ValueIdentifiers(const Node& n, std::vector<Node>& out) {
  n.Walk([&](const Node& m) {
    std::string_view t = m.type();
    if (t == "identifier") {
      out.push_back(m);
      return false;
    }
    if (t == "attribute" || t == "keyword_argument") {
      ValueIdentifiers(m.field(t == "attribute" ? "object" : "value"), out);
      return false;
    }
    return true;
  });
}

}  // namespace

std::vector<Node> Identifiers(const Node& expr) {
  std::vector<Node> out;
  if (expr.type() == "identifier") {  // the expression itself may be a name that is no value
    Node p = expr.parent();
    if (!p.is_null() && p.type() == "attribute" && p.field("attribute") == expr) return out;
    if (!p.is_null() && p.type() == "keyword_argument" && p.field("name") == expr) return out;
  }
  ValueIdentifiers(expr, out);
  return out;
}

std::set<std::string> IdentifierNames(const Node& expr) {
  std::set<std::string> s;
  for (const Node& n : Identifiers(expr)) s.insert(std::string(n.text()));
  return s;
}

std::string SubstituteLeaves(const Node& expr, const std::function<std::optional<std::string>(const Node&)>& fn) {
  std::string_view src = expr.text();
  uint32_t base = expr.span().begin.byte;
  std::vector<Node> leaves = Identifiers(expr);
  expr.Walk([&](const Node& n) {
    if (n.type() == "integer") leaves.push_back(n);
    return true;
  });
  std::sort(leaves.begin(), leaves.end(),
            [](const Node& a, const Node& b) { return a.span().begin.byte < b.span().begin.byte; });
  std::string out;
  uint32_t at = 0;
  for (const Node& id : leaves) {
    auto r = fn(id);
    if (!r) continue;
    uint32_t b = id.span().begin.byte - base, e = id.span().end.byte - base;
    if (b < at) continue;
    out.append(src.substr(at, b - at));
    out += *r;
    at = e;
  }
  out.append(src.substr(at));
  return out;
}

std::string SubstituteNodes(const Node& expr, const std::function<std::optional<std::string>(const Node&)>& fn) {
  std::string_view src = expr.text();
  const uint32_t base = expr.span().begin.byte;
  std::string out;
  uint32_t at = 0;
  expr.Walk([&](const Node& n) {  // source order, outermost first
    auto r = fn(n);
    if (!r) return true;
    const uint32_t b = n.span().begin.byte - base, e = n.span().end.byte - base;
    out.append(src.substr(at, b - at));
    out += *r;
    at = e;
    return false;
  });
  out.append(src.substr(at));
  return out;
}

std::string SubstituteIdentifiers(const Node& expr,
                                  const std::function<std::optional<std::string>(std::string_view)>& fn) {
  return SubstituteLeaves(expr, [&](const Node& n) -> std::optional<std::string> {
    if (n.type() != "identifier") return std::nullopt;
    return fn(n.text());
  });
}

Node EnclosingStatement(const Node& n) {
  Node cur = n;
  while (!cur.is_null()) {
    Node p = cur.parent();
    if (p.is_null()) return cur;
    if (p.type() == "block" || p.type() == "module") return cur;
    cur = p;
  }
  return cur;
}

Node EnclosingFunction(const Tree& tree, uint32_t byte) {
  Node n = NodeAtBytes(tree, byte, byte);
  while (!n.is_null() && n.type() != "function_definition") n = n.parent();
  return n;
}

std::vector<SimpleAssign> AssignmentsIn(const Node& scope, bool unpacked) {
  std::vector<SimpleAssign> out;
  scope.Walk([&](const Node& n) {
    if (!(n == scope) && (n.type() == "function_definition" || n.type() == "class_definition" || n.type() == "lambda"))
      return false;
    if (n.type() == "assignment" || n.type() == "augmented_assignment") {
      Node left = n.field("left"), right = n.field("right");
      if (!left.is_null() && left.type() == "identifier" && !right.is_null()) {
        out.push_back({std::string(left.text()), EnclosingStatement(n), right, n.type() == "augmented_assignment"});
      } else if (unpacked && n.type() == "assignment" && !left.is_null() && !right.is_null() &&
                 (left.type() == "pattern_list" || left.type() == "tuple_pattern")) {
        Node r = Unparen(right);
        auto lhs = left.named_children();
        std::vector<Node> rhs;
        if (r.type() == "expression_list" || r.type() == "tuple") rhs = r.named_children();
        if (rhs.size() == lhs.size())
          for (size_t i = 0; i < lhs.size(); ++i)
            if (lhs[i].type() == "identifier") out.push_back({std::string(lhs[i].text()), EnclosingStatement(n), rhs[i]});
      }
      return true;
    }
    return true;
  });
  return out;
}

const SimpleAssign* LastAssignBefore(const std::vector<SimpleAssign>& as, std::string_view name, uint32_t before,
                                     int* count) {
  const SimpleAssign* last = nullptr;
  int c = 0;
  for (const auto& a : as) {
    if (a.name != name) continue;
    ++c;
    if (a.stmt.span().begin.byte < before) last = &a;
  }
  if (count) *count = c;
  return last;
}

Node Unparen(Node n) {
  while (!n.is_null() && n.type() == "parenthesized_expression") {
    Node inner;
    int count = 0;
    for (const Node& c : n.named_children())
      if (c.type() != "comment") inner = c, ++count;
    if (count != 1) break;
    n = inner;
  }
  return n;
}

Node Definition(const Node& stmt) { return stmt.type() == "decorated_definition" ? stmt.field("definition") : stmt; }

std::string Dotted(const Node& n) {
  if (n.is_null()) return "";
  if (n.type() == "identifier") return std::string(n.text());
  if (n.type() == "attribute") {
    std::string obj = Dotted(n.field("object"));
    if (obj.empty()) return "";
    return obj + "." + std::string(n.field("attribute").text());
  }
  return "";
}

}  // namespace kiln::pyast
