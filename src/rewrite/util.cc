// kiln/rewrite: helpers shared by the rewrites (text, tree, edits, kernel facts).
#include <algorithm>
#include <charconv>
#include <fmt/format.h>

#include "rewrite/internal.h"

namespace kiln::rewrite::internal {

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
  if (*b == '-') { neg = true; ++b; }
  int base = 10;
  if (e - b > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) { base = 16; b += 2; }
  auto r = std::from_chars(b, e, v, base);
  if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
  return neg ? -v : v;
}

bool IsPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

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

Node NodeAtBytes(const Tree& tree, uint32_t begin, uint32_t end) {
  Node n = tree.root();
  for (;;) {
    Node next;
    for (const Node& c : n.named_children()) {
      Span s = c.span();
      if (s.begin.byte <= begin && s.end.byte >= end) { next = c; break; }
    }
    if (next.is_null()) return n;  // the innermost named node covering the range
    n = next;
  }
}

Node NodeAt(const Tree& tree, const Span& span) { return NodeAtBytes(tree, span.begin.byte, span.end.byte); }

std::vector<Node> Identifiers(const Node& expr) {
  std::vector<Node> out;
  expr.Walk([&](const Node& n) {
    if (n.type() == "identifier") {
      Node p = n.parent();
      if (!p.is_null() && p.type() == "attribute" && p.field("attribute") == n) return true;
      if (!p.is_null() && p.type() == "keyword_argument" && p.field("name") == n) return true;
      out.push_back(n);
    }
    return true;
  });
  return out;
}

std::set<std::string> IdentifierNames(const Node& expr) {
  std::set<std::string> s;
  for (const Node& n : Identifiers(expr)) s.insert(std::string(n.text()));
  return s;
}

std::string SubstituteLeaves(const Node& expr,
                             const std::function<std::optional<std::string>(const Node&)>& fn) {
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

std::vector<SimpleAssign> AssignmentsIn(const Node& scope) {
  std::vector<SimpleAssign> out;
  scope.Walk([&](const Node& n) {
    if (!(n == scope) && (n.type() == "function_definition" || n.type() == "class_definition" ||
                          n.type() == "lambda"))
      return false;
    if (n.type() == "assignment" || n.type() == "augmented_assignment") {
      Node left = n.field("left"), right = n.field("right");
      if (!left.is_null() && left.type() == "identifier" && !right.is_null()) {
        out.push_back({std::string(left.text()), EnclosingStatement(n), right,
                       n.type() == "augmented_assignment"});
      }
      return true;
    }
    return true;
  });
  return out;
}

const SimpleAssign* LastAssignBefore(const std::vector<SimpleAssign>& as, std::string_view name,
                                     uint32_t before, int* count) {
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

namespace {

// Assignments visible at `before`: the enclosing function's, then the module's.
struct Scopes {
  std::vector<SimpleAssign> local, module;
  bool has_local = false;
};

Scopes ScopesAt(const Tree& tree, uint32_t before) {
  Scopes s;
  Node fn = EnclosingFunction(tree, before);
  if (!fn.is_null()) {
    s.local = AssignmentsIn(fn.field("body"));
    s.has_local = true;
  }
  // Module level: only top-level statements.
  for (const Node& st : tree.root().named_children()) {
    if (st.type() != "expression_statement") continue;
    Node a = st.named_child(0);
    if (a.type() == "assignment") {
      Node left = a.field("left"), right = a.field("right");
      if (!left.is_null() && left.type() == "identifier" && !right.is_null())
        s.module.push_back({std::string(left.text()), st, right, false});
    }
  }
  return s;
}

const SimpleAssign* Lookup(const Scopes& s, std::string_view name, uint32_t before, int* count) {
  const SimpleAssign* a = LastAssignBefore(s.local, name, before, count);
  if (a) return a;
  int c = 0;
  a = LastAssignBefore(s.module, name, UINT32_MAX, &c);
  if (count) *count = c;
  return a;
}

}  // namespace

bool DependsOn(const Tree& tree, const Node& expr, std::string_view var, uint32_t before, int depth) {
  auto names = IdentifierNames(expr);
  if (names.count(std::string(var))) return true;
  if (depth <= 0) return false;
  Scopes s = ScopesAt(tree, before);
  for (const auto& n : names) {
    const SimpleAssign* a = Lookup(s, n, before, nullptr);
    if (a && DependsOn(tree, a->value, var, a->stmt.span().begin.byte, depth - 1)) return true;
  }
  return false;
}

std::optional<std::string> InlineVars(const Tree& tree, const Node& expr,
                                      const std::map<std::string, std::string>& vars, uint32_t before,
                                      int depth, const std::map<std::string, std::string>* literals) {
  bool failed = false;
  Scopes s = ScopesAt(tree, before);
  std::string out = SubstituteLeaves(expr, [&](const Node& node) -> std::optional<std::string> {
    std::string_view name = node.text();
    if (node.type() == "integer") {
      if (!literals) return std::nullopt;
      auto it = literals->find(std::string(name));
      if (it == literals->end()) return std::nullopt;
      return it->second;
    }
    auto it = vars.find(std::string(name));
    if (it != vars.end()) return it->second;
    if (depth <= 0) return std::nullopt;
    int count = 0;
    const SimpleAssign* a = Lookup(s, name, before, &count);
    if (!a) return std::nullopt;
    bool dep = false;
    for (const auto& [v, _] : vars)
      if (DependsOn(tree, a->value, v, a->stmt.span().begin.byte, depth - 1)) dep = true;
    if (!dep) return std::nullopt;
    if (count != 1 || a->augmented) {
      failed = true;
      return std::nullopt;
    }
    auto inner = InlineVars(tree, a->value, vars, a->stmt.span().begin.byte, depth - 1, nullptr);
    if (!inner) {
      failed = true;
      return std::nullopt;
    }
    return "(" + *inner + ")";
  });
  if (failed) return std::nullopt;
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
  if (first_kept > 0)
    KILN_RETURN_IF_ERROR(edits.Replace(spans[0].begin.byte, spans[first_kept].begin.byte, ""));
  for (size_t i = first_kept + 1; i < n; ++i)
    if (remove[i]) KILN_RETURN_IF_ERROR(edits.Replace(spans[i - 1].end.byte, spans[i].end.byte, ""));
  return Status::Ok();
}

Node KernelDef(const Tree& tree, const Kernel& k) {
  Node n = NodeAt(tree, k.def_span);
  while (!n.is_null() && n.type() != "function_definition") n = n.parent();
  return n;
}

std::set<std::string> PidVars(const Tree& tree, const Kernel& k) {
  std::set<std::string> vars;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return vars;
  auto as = AssignmentsIn(def.field("body"));
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto& a : as) {
      if (vars.count(a.name)) continue;
      bool dep = a.value.text().find("program_id") != std::string_view::npos;
      for (const auto& n : IdentifierNames(a.value))
        if (vars.count(n)) dep = true;
      if (dep) vars.insert(a.name);
    }
  }
  return vars;
}

std::set<std::string> TileConstexprs(const Tree& tree, const Kernel& k) {
  std::set<std::string> out;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  auto pids = PidVars(tree, k);
  std::set<std::string> cx;
  for (const auto& p : k.params)
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
  auto pid_dep = [&](const Node& e) {
    if (e.text().find("program_id") != std::string_view::npos) return true;
    for (const auto& n : IdentifierNames(e))
      if (pids.count(n)) return true;
    return false;
  };
  def.field("body").Walk([&](const Node& n) {
    if (n.type() == "binary_operator") {
      Node op = n.field("operator");
      if (!op.is_null() && op.type() == "*") {
        Node l = n.field("left"), r = n.field("right");
        for (auto [a, b] : {std::pair{l, r}, std::pair{r, l}}) {
          if (a.type() == "identifier" && cx.count(std::string(a.text())) && pid_dep(b))
            out.insert(std::string(a.text()));
        }
      }
    }
    return true;
  });
  return out;
}

std::set<std::string> PowerOfTwoConstexprs(const Tree& tree, const Kernel& k) {
  std::set<std::string> cx, out;
  for (const auto& p : k.params)
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
  auto add_from = [&](const Node& e) {
    for (const auto& n : IdentifierNames(e))
      if (cx.count(n)) out.insert(n);
  };
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  def.field("body").Walk([&](const Node& n) {
    if (n.type() != "call") return true;
    Node fn = n.field("function");
    std::string_view f = fn.text();
    auto ends = [&](std::string_view s) {
      return f.size() >= s.size() && f.substr(f.size() - s.size()) == s &&
             (f.size() == s.size() || f[f.size() - s.size() - 1] == '.');
    };
    Node args = n.field("arguments");
    if (ends("arange")) {
      if (args.named_child_count() >= 2) add_from(args.named_child(1));
      else if (args.named_child_count() == 1) add_from(args.named_child(0));
    } else if (ends("zeros") || ends("full") || ends("reshape") || ends("broadcast_to")) {
      if (args.named_child_count() >= 1) {
        Node a0 = args.named_child(0);
        if (a0.type() == "tuple" || a0.type() == "list" || a0.type() == "identifier") add_from(a0);
      }
    } else if (ends("make_block_ptr") || ends("make_tensor_descriptor")) {
      for (const Node& a : args.named_children())
        if (a.type() == "keyword_argument" && a.field("name").text() == "block_shape")
          add_from(a.field("value"));
    }
    return true;
  });
  return out;
}

std::string PointerBase(const Tree& tree, const Kernel& k, const Span& pointer) {
  if (pointer.size() == 0) return "";
  Node def = KernelDef(tree, k);
  if (def.is_null()) return "";
  auto as = AssignmentsIn(def.field("body"));
  std::set<std::string> bases, seen;
  std::vector<std::string> work;
  for (const auto& n : IdentifierNames(NodeAt(tree, pointer))) work.push_back(n);
  while (!work.empty()) {
    std::string n = work.back();
    work.pop_back();
    if (!seen.insert(n).second) continue;
    if (const Param* p = k.FindParam(n)) {
      if (p->kind == analysis::ParamKind::kPointer) bases.insert(n);
      continue;
    }
    for (const auto& a : as)
      if (a.name == n)
        for (const auto& m : IdentifierNames(a.value)) work.push_back(m);
  }
  return bases.size() == 1 ? *bases.begin() : "";
}

std::string TlAlias(const ModuleModel& m) { return m.tl_aliases.empty() ? "tl" : m.tl_aliases[0]; }
std::string TritonAlias(const ModuleModel& m) {
  return m.triton_aliases.empty() ? "triton" : m.triton_aliases[0];
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

std::vector<int> TargetLaunches(const ModuleModel& m, const Target& t) {
  if (!t.launches.empty()) return t.launches;
  std::vector<int> out;
  for (size_t i = 0; i < m.launches.size(); ++i)
    if (m.launches[i].kernel == t.kernel) out.push_back(static_cast<int>(i));
  return out;
}

std::string ValueText(int64_t v, bool boolean) {
  if (boolean) return v ? "True" : "False";
  return std::to_string(v);
}

}  // namespace kiln::rewrite::internal

namespace kiln::rewrite::internal {

namespace {

// `f` is `name` or ends in `.name`.
bool CalleeIs(std::string_view f, std::string_view name) {
  return f == name || (f.size() > name.size() && f.substr(f.size() - name.size()) == name &&
                       f[f.size() - name.size() - 1] == '.');
}

struct ValueUse {
  const Tree& tree;
  const ModuleModel& m;
  std::set<std::string> mods;  // tl, triton, math: module names inside expressions

  // Walks `body` without entering nested definitions.
  template <class F>
  void Each(const Node& body, F&& f) const {
    body.Walk([&](const Node& n) {
      if (!(n == body) && (n.type() == "function_definition" || n.type() == "class_definition" ||
                           n.type() == "lambda"))
        return false;
      f(n);
      return true;
    });
  }

  static bool IsLoadCall(const Node& n) {
    if (n.type() != "call") return false;
    std::string_view f = n.field("function").text();
    return CalleeIs(f, "load") || CalleeIs(f, "_experimental_descriptor_load") || f.find("atomic_") != std::string_view::npos;
  }

  bool IsData(const Node& e, const std::set<std::string>& data) const {
    bool d = false;
    e.Walk([&](const Node& n) {
      if (d) return false;
      // A comparison yields a mask: loaded values only decide which lanes are on (block_mask =
      // tl.where(start < seq_len, 1, 0) bounds a loop; its magnitude is not data).
      if (n.type() == "comparison_operator" && !(n == e)) return false;
      if (IsLoadCall(n)) d = true;
      if (n.type() == "identifier") {
        Node p = n.parent();
        bool attr = !p.is_null() && p.type() == "attribute" && p.field("attribute") == n;
        bool kw = !p.is_null() && p.type() == "keyword_argument" && p.field("name") == n;
        if (!attr && !kw && data.count(std::string(n.text()))) d = true;
      }
      return !d;
    });
    return d;
  }

  // An expression of constexprs (and literals / module attributes) only; the constexprs it reads.
  std::set<std::string> PureC(const Node& e, const std::map<std::string, std::set<std::string>>& cs) const {
    std::set<std::string> out;
    // Scalar functions of constants only: tl.arange(0, BLOCK) and tl.zeros([BLOCK]) are index vectors
    // and buffers (their values do not depend on the tile size the way `x * BLOCK` does).
    static const std::set<std::string> kScalarFns = {"to", "cdiv", "constexpr", "exp", "exp2", "log", "log2",
                                                     "sqrt", "rsqrt", "abs", "min", "max", "minimum", "maximum",
                                                     "int", "float", "bool", "pow"};
    bool calls = false;
    e.Walk([&](const Node& n) {
      if (n.type() == "call") {
        std::string f(n.field("function").text());
        std::string leaf = f.substr(f.rfind('.') == std::string::npos ? 0 : f.rfind('.') + 1);
        if (!kScalarFns.count(leaf)) calls = true;
      }
      return !calls;
    });
    if (calls) return {};
    for (const Node& id : Identifiers(e)) {
      std::string s(id.text());
      auto it = cs.find(s);
      if (it != cs.end()) { out.insert(it->second.begin(), it->second.end()); continue; }
      if (mods.count(s)) continue;
      return {};
    }
    return out;
  }

  // Names assigned by an assignment's left side (identifiers, tuples of them).
  static std::vector<std::string> Targets(const Node& left) {
    std::vector<std::string> out;
    if (left.is_null()) return out;
    if (left.type() == "identifier") return {std::string(left.text())};
    if (left.type() == "pattern_list" || left.type() == "tuple_pattern" || left.type() == "tuple")
      for (const Node& c : left.named_children())
        if (c.type() == "identifier") out.push_back(std::string(c.text()));
    return out;
  }

  // `cs`: name -> the caller's constexprs it carries; `data`: names holding loaded values.
  void Run(const Node& def, std::map<std::string, std::set<std::string>> cs, std::set<std::string> data,
           const std::string& where, int depth, std::map<std::string, std::string>& out) const {
    Node body = def.field("body");
    if (body.is_null()) return;
    std::vector<std::pair<Node, Node>> assigns;  // (left, right)
    Each(body, [&](const Node& n) {
      if (n.type() == "assignment" || n.type() == "augmented_assignment")
        if (!n.field("right").is_null()) assigns.push_back({n.field("left"), n.field("right")});
    });
    // Names computed from constexprs only (BLOCK_OUT: tl.constexpr = BLOCK_IN * 2), each assigned once.
    std::map<std::string, int> count;
    for (const auto& [l, r] : assigns)
      for (const auto& t : Targets(l)) ++count[t];
    for (int pass = 0; pass < 3; ++pass)
      for (const auto& [l, r] : assigns) {
        if (l.type() != "identifier" || count[std::string(l.text())] != 1 || cs.count(std::string(l.text()))) continue;
        auto p = PureC(r, cs);
        if (!p.empty()) cs[std::string(l.text())] = p;
      }
    for (int pass = 0; pass < 4; ++pass)
      for (const auto& [l, r] : assigns)
        if (IsData(r, data))
          for (const auto& t : Targets(l)) data.insert(t);
    auto note = [&](const std::set<std::string>& names, const Node& at, const std::string& how) {
      for (const auto& n : names)
        if (!out.count(n))
          out[n] = fmt::format("{} at line {}{}", how, at.span().begin.line, where);
    };
    auto text = [](const Node& n) {
      std::string t;
      for (char ch : n.text()) {
        bool sp = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
        if (sp && (t.empty() || t.back() == ' ' || t.back() == '(')) continue;
        t += sp ? ' ' : ch;
      }
      if (t.size() > 60) t = t.substr(0, 57) + "...";
      return t;
    };
    Each(body, [&](const Node& n) {
      std::string_view ty = n.type();
      if (ty == "binary_operator" || ty == "boolean_operator") {
        Node a = n.field("left"), b = n.field("right");
        for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
          if (x.is_null() || y.is_null()) continue;
          auto p = PureC(x, cs);
          if (!p.empty() && IsData(y, data)) note(p, n, "'" + text(n) + "'");
        }
      } else if (ty == "comparison_operator") {
        std::vector<Node> ops = n.named_children();
        for (const Node& x : ops) {
          auto p = PureC(x, cs);
          if (p.empty()) continue;
          for (const Node& y : ops)
            if (!(x == y) && IsData(y, data)) note(p, n, "'" + text(n) + "'");
        }
      } else if (ty == "augmented_assignment") {
        Node l = n.field("left"), r = n.field("right");
        auto p = r.is_null() ? std::set<std::string>{} : PureC(r, cs);
        if (!p.empty() && !l.is_null() && IsData(l, data)) note(p, n, "'" + text(n) + "'");
      } else if (ty == "call") {
        std::string f(n.field("function").text());
        Node args = n.field("arguments");
        if (args.is_null()) return;
        std::vector<Node> pos;
        std::vector<std::pair<std::string, Node>> kws;
        for (const Node& a : args.named_children()) {
          if (a.type() == "keyword_argument") kws.push_back({std::string(a.field("name").text()), a.field("value")});
          else if (a.type() != "comment") pos.push_back(a);
        }
        std::string leaf = f.substr(f.rfind('.') == std::string::npos ? 0 : f.rfind('.') + 1);
        const Kernel* helper = f.find('.') == std::string::npos ? m.FindKernel(f) : nullptr;
        if (helper) {
          if (depth >= 3) return;
          Node hdef = KernelDef(tree, *helper);
          if (hdef.is_null()) return;
          std::map<std::string, std::set<std::string>> hcs;
          std::set<std::string> hdata;
          auto bind = [&](const std::string& pname, const Node& v) {
            auto p = PureC(v, cs);
            if (!p.empty()) hcs[pname] = p;
            if (IsData(v, data)) hdata.insert(pname);
          };
          for (size_t i = 0; i < pos.size() && i < helper->params.size(); ++i) bind(helper->params[i].name, pos[i]);
          for (const auto& [kn, v] : kws)
            if (helper->FindParam(kn)) bind(kn, v);
          if (hcs.empty()) return;
          std::map<std::string, std::string> sub;
          Run(hdef, hcs, hdata, " in " + helper->name, depth + 1, sub);
          // `sub` is keyed by the caller's constexprs already (hcs maps to them).
          for (const auto& [name, why] : sub)
            if (!out.count(name)) out[name] = why;
          return;
        }
        if (leaf == "store") {
          Node v = pos.size() >= 2 ? pos[1] : Node();
          for (const auto& [kn, kv] : kws)
            if (kn == "value") v = kv;
          if (!v.is_null()) {
            auto p = PureC(v, cs);
            if (!p.empty()) note(p, n, "stored as a value ('" + text(n) + "')");
          }
          return;
        }
        static const std::set<std::string> kIndex = {
            "load", "arange", "zeros", "full", "reshape", "view", "broadcast_to", "expand_dims", "program_id",
            "num_programs", "multiple_of", "max_contiguous", "max_constancy", "make_block_ptr", "advance",
            "make_tensor_descriptor", "range", "static_range", "cdiv", "to", "static_assert", "device_assert",
            "static_print", "device_print", "zeros_like", "full_like", "split", "permute", "trans"};
        if (kIndex.count(leaf)) return;
        std::vector<Node> vals = pos;
        for (const auto& kv : kws) vals.push_back(kv.second);
        for (const Node& x : vals) {
          auto p = PureC(x, cs);
          if (p.empty()) continue;
          for (const Node& y : vals)
            if (!(x == y) && IsData(y, data)) note(p, n, "'" + text(n) + "'");
        }
      }
    });
  }
};

}  // namespace

std::map<std::string, std::string> ValueConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k) {
  std::map<std::string, std::string> out;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  ValueUse vu{tree, m, {"tl", "triton", "math"}};
  for (const auto& a : m.tl_aliases) vu.mods.insert(a);
  for (const auto& a : m.triton_aliases) vu.mods.insert(a);
  std::map<std::string, std::set<std::string>> cs;
  for (const auto& p : k.params)
    if (p.kind == analysis::ParamKind::kConstexpr) cs[p.name] = {p.name};
  vu.Run(def, cs, {}, "", 0, out);
  return out;
}

}  // namespace kiln::rewrite::internal

namespace kiln::rewrite::internal {

std::map<std::string, DivisorUse> DivisorConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k) {
  (void)m;
  std::map<std::string, DivisorUse> out;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  Node body = def.field("body");
  std::set<std::string> cx, scalars;
  for (const auto& p : k.params) {
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
    if (p.kind == analysis::ParamKind::kScalar) scalars.insert(p.name);
  }
  if (cx.empty()) return out;
  auto is_call = [](const Node& n, std::string_view leaf) {
    return n.type() == "call" && CalleeIs(n.field("function").text(), leaf);
  };
  auto is_name = [](const Node& n) {
    if (n.type() != "identifier") return false;
    Node p = n.parent();
    if (!p.is_null() && p.type() == "attribute" && p.field("attribute") == n) return false;
    if (!p.is_null() && p.type() == "keyword_argument" && p.field("name") == n) return false;
    return true;
  };
  auto cx_in = [&](const Node& e) {
    std::set<std::string> s;
    for (const auto& id : IdentifierNames(e))
      if (cx.count(id)) s.insert(id);
    return s;
  };
  auto as = AssignmentsIn(body);

  // Which tl.arange(0, B) bounds reach an expression (offsets), following each name to its last plain
  // assignment before the use plus every augmented one (`p += step`). `x % X` is within [0, X) whatever
  // B is (the tutorial's `(pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M`).
  std::map<uint32_t, std::set<std::string>> memo;  // assignment statement -> its value's offsets
  std::function<std::set<std::string>(const Node&, int)> offsets = [&](const Node& e, int depth) {
    std::set<std::string> s;
    e.Walk([&](const Node& n) {
      if (is_call(n, "arange")) {
        auto c = cx_in(n.field("arguments"));
        s.insert(c.begin(), c.end());
        return false;
      }
      if (n.type() == "binary_operator") {
        Node op = n.field("operator");
        if (!op.is_null() && op.type() == "%") {
          auto r = offsets(n.field("right"), depth);
          s.insert(r.begin(), r.end());
          return false;
        }
      }
      if (is_name(n) && depth < 12) {
        std::string name(n.text());
        uint32_t at = n.span().begin.byte;
        const SimpleAssign* last = nullptr;
        for (const auto& a : as)
          if (a.name == name && !a.augmented && a.stmt.span().begin.byte < at) last = &a;
        for (const auto& a : as) {
          if (a.name != name || !(&a == last || a.augmented)) continue;
          uint32_t key = a.stmt.span().begin.byte;
          auto it = memo.find(key);
          if (it == memo.end()) {
            memo[key] = {};  // cycles (p = p + step) end here
            auto v = offsets(a.value, depth + 1);
            it = memo.insert_or_assign(key, v).first;
          }
          s.insert(it->second.begin(), it->second.end());
        }
      }
      return true;
    });
    return s;
  };

  // Block pointers: the constexprs of each block_shape dimension, per variable (through tl.advance).
  std::map<std::string, std::vector<std::set<std::string>>> shapes;
  auto shape_of = [&](const Node& e) -> std::vector<std::set<std::string>> {
    Node n = e;
    while (!n.is_null() && n.type() == "parenthesized_expression") n = n.named_child(0);
    if (n.is_null()) return {};
    if (n.type() == "identifier") {
      auto it = shapes.find(std::string(n.text()));
      return it == shapes.end() ? std::vector<std::set<std::string>>{} : it->second;
    }
    if (is_call(n, "make_block_ptr")) {
      Node bs;
      int pos = 0;
      for (const Node& a : n.field("arguments").named_children()) {
        if (a.type() == "keyword_argument") {
          if (a.field("name").text() == "block_shape") bs = a.field("value");
        } else if (a.type() != "comment" && pos++ == 4) {
          bs = a;
        }
      }
      std::vector<std::set<std::string>> dims;
      if (!bs.is_null() && (bs.type() == "tuple" || bs.type() == "list"))
        for (const Node& d : bs.named_children()) dims.push_back(cx_in(d));
      return dims;
    }
    return {};
  };
  for (int pass = 0; pass < 3; ++pass)
    for (const auto& a : as) {
      Node v = a.value;
      if (is_call(v, "advance")) {
        auto args = v.field("arguments").named_children();
        if (!args.empty()) v = args[0];
      }
      auto d = shape_of(v);
      if (!d.empty()) shapes[a.name] = d;
    }

  auto flag = [&](const std::string& name, std::string where) {
    if (!out.count(name)) out[name].where = std::move(where);
  };
  auto brief = [](std::string_view t) {
    std::string s;
    for (char ch : t) {
      bool sp = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
      if (sp && (s.empty() || s.back() == ' ' || s.back() == '(')) continue;
      s += sp ? ' ' : ch;
    }
    return s.size() > 50 ? s.substr(0, 47) + "..." : s;
  };
  // The constexprs an access is not masked along (`masked`: those it is masked along).
  auto along = [&](const analysis::Expr& ptr_e, const analysis::Expr& mask, bool block_ptr,
                   const analysis::Expr& boundary_check, std::set<std::string>* masked) {
    std::map<std::string, int> open;  // name -> dimension (block pointers) or -1
    if (!ptr_e.present()) return open;
    Node ptr = NodeAt(tree, ptr_e.span);
    if (block_ptr) {
      std::set<int> checked;
      if (boundary_check.present())
        NodeAt(tree, boundary_check.span).Walk([&](const Node& n) {
          if (n.type() == "integer")
            if (auto v = ParseIntLiteral(n.text())) checked.insert(static_cast<int>(*v));
          return true;
        });
      auto dims = shape_of(ptr);
      for (size_t i = 0; i < dims.size(); ++i)
        for (const auto& b : dims[i]) {
          if (checked.count(static_cast<int>(i))) masked->insert(b);
          else open.emplace(b, static_cast<int>(i));
        }
      return open;
    }
    for (const auto& b : offsets(ptr, 0)) open.emplace(b, -1);
    if (mask.present() && Trim(mask.text) != "None")
      for (const auto& b : offsets(NodeAt(tree, mask.span), 0)) {
        masked->insert(b);
        open.erase(b);
      }
    return open;
  };
  auto why = [&](const Span& call, int dim) {
    std::string what = brief(NodeAt(tree, call).text());
    return dim >= 0 ? fmt::format("{} at line {} has no boundary_check on dimension {}", what, call.begin.line, dim)
                    : fmt::format("{} at line {} is not masked along it", what, call.begin.line);
  };
  // `E // B` with a run-time E: a whole number of B-sized pieces (`groupsize // BLOCK_K`, `K // BLOCK_K`).
  std::set<std::string> runtime = scalars;
  for (int pass = 0; pass < 3; ++pass)
    for (const auto& a : as)
      for (const auto& id : IdentifierNames(a.value))
        if (runtime.count(id)) runtime.insert(a.name);
  body.Walk([&](const Node& n) {
    if (n.type() == "function_definition" || n.type() == "lambda") return false;
    if (n.type() != "binary_operator") return true;
    Node op = n.field("operator"), l = n.field("left"), r = n.field("right");
    if (op.is_null() || op.type() != "//" || r.is_null() || r.type() != "identifier" || !cx.count(std::string(r.text())))
      return true;
    bool rt = false;
    auto ls = IdentifierNames(l);
    for (const auto& id : ls)
      if (runtime.count(id)) rt = true;
    if (ls.count(std::string(r.text()))) rt = false;  // (E + B - 1) // B: a ceiling division
    if (rt)
      flag(std::string(r.text()), fmt::format("'{}' at line {} floor-divides a run-time value by it", brief(n.text()),
                                               n.span().begin.line));
    return true;
  });
  // Stores and atomics not masked along B write past the end of a smaller extent.
  std::set<std::string> store_masked, ignore;
  for (const auto& mo : k.memops)
    if (mo.kind == analysis::MemOp::Kind::kStore)
      for (const auto& [b, dim] : along(mo.pointer, mo.mask, mo.block_pointer, mo.boundary_check, &store_masked))
        flag(b, why(mo.span, dim));
  for (const auto& at : k.atomics)
    for (const auto& [b, dim] : along(at.pointer, at.mask, false, {}, &store_masked)) flag(b, why(at.span, dim));
  // Loads not masked along B read past the end. Along a program-id tile whose stores are masked along it,
  // what they read lands only in lanes the stores drop (the tutorial matmul's rows and columns); along
  // anything else (a loop-stepped reduction dimension, a tile the stores do not guard) it enters results.
  std::set<std::string> pid_tiles = TileConstexprs(tree, k);
  for (const auto& mo : k.memops)
    if (mo.kind == analysis::MemOp::Kind::kLoad)
      for (const auto& [b, dim] : along(mo.pointer, mo.mask, mo.block_pointer, mo.boundary_check, &ignore))
        if (!(pid_tiles.count(b) && store_masked.count(b))) flag(b, why(mo.span, dim));

  if (out.empty()) return out;

  // Tiled: B steps over the extent (program id * B, a loop step, an increment or advance in a loop,
  // loop variable * B).
  std::set<std::string> tiled = pid_tiles;
  for (const auto& lp : k.loops) {
    if (lp.step.present())
      for (const auto& b : cx_in(NodeAt(tree, lp.step.span))) tiled.insert(b);
    Node stmt = NodeAt(tree, lp.span);
    while (!stmt.is_null() && stmt.type() != "for_statement" && stmt.type() != "while_statement") stmt = stmt.parent();
    if (stmt.is_null()) continue;
    Node lbody = stmt.field("body");
    if (lbody.is_null()) continue;
    std::set<std::string> targets;
    if (!stmt.field("left").is_null())
      for (const auto& id : IdentifierNames(stmt.field("left"))) targets.insert(id);
    lbody.Walk([&](const Node& n) {
      if (n.type() == "augmented_assignment" && !n.field("right").is_null())
        for (const auto& b : cx_in(n.field("right"))) tiled.insert(b);
      if (is_call(n, "advance"))
        for (const auto& b : cx_in(n.field("arguments"))) tiled.insert(b);
      if (n.type() == "binary_operator") {
        Node op = n.field("operator");
        if (!op.is_null() && op.type() == "*") {
          Node a = n.field("left"), b = n.field("right");
          for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
            if (x.type() == "identifier" && targets.count(std::string(x.text())))
              for (const auto& c : cx_in(y)) tiled.insert(c);
        }
      }
      return true;
    });
  }
  for (auto& [name, use] : out) use.tiled = tiled.count(name) > 0;
  return out;
}

}  // namespace kiln::rewrite::internal

namespace kiln::rewrite::internal {

Node Unparen(Node n) {
  while (!n.is_null() && n.type() == "parenthesized_expression") n = n.named_child(0);
  return n;
}

std::map<std::string, std::string> BlockIndexConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k) {
  (void)m;
  std::map<std::string, std::string> out;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  Node body = def.field("body");
  std::set<std::string> cx, ptrs;
  for (const auto& p : k.params) {
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
    if (p.kind == analysis::ParamKind::kPointer) ptrs.insert(p.name);
  }
  if (cx.empty() || ptrs.empty()) return out;
  auto is_div = [](const Node& n) {
    if (n.type() != "binary_operator") return false;
    Node op = n.field("operator");
    return !op.is_null() && (op.type() == "//" || op.type() == "/");
  };
  auto is_cdiv = [](const Node& n) { return n.type() == "call" && CalleeIs(n.field("function").text(), "cdiv"); };
  // The constexprs `e` divides by, outside any denominator of `e`.
  auto divided_by = [&](const Node& e) {
    std::set<std::string> s;
    e.Walk([&](const Node& n) {
      Node d;
      if (is_div(n)) d = Unparen(n.field("right"));
      else if (is_cdiv(n) && n.field("arguments").named_child_count() == 2) d = Unparen(n.field("arguments").named_child(1));
      if (d.is_null() || d.type() != "identifier" || !cx.count(std::string(d.text()))) return true;
      for (Node c = n; !(c == e);) {
        Node p = c.parent();
        if (p.is_null()) break;
        if (is_div(p) && p.field("right") == c) return true;  // a denominator: scales by B
        if (p.type() == "argument_list" && !p.parent().is_null() && is_cdiv(p.parent()) && p.named_child_count() == 2 &&
            p.named_child(1) == c)
          return true;
        c = p;
      }
      s.insert(std::string(d.text()));
      return true;
    });
    return s;
  };
  auto as = AssignmentsIn(body);
  // Pointer variables: pointer parameters and what is assigned from them.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& a : as)
      if (!ptrs.count(a.name))
        for (const auto& id : IdentifierNames(a.value))
          if (ptrs.count(id)) {
            ptrs.insert(a.name);
            changed = true;
            break;
          }
  }
  auto line_of = [](const Node& n) { return n.span().begin.line; };
  // A tile index times a block size (`pid_n * BLOCK_N`) is an ordinary tile offset, whatever pid_n is.
  auto scaled = [&](Node n, const Node& root) {
    for (Node c = n; !(c == root);) {
      Node p = c.parent();
      if (p.is_null()) break;
      if (p.type() == "binary_operator" && !p.field("operator").is_null() && p.field("operator").type() == "*") {
        Node other = p.field("left") == c ? p.field("right") : p.field("left");
        for (const auto& id : IdentifierNames(other))
          if (cx.count(id)) return true;
      }
      c = p;
    }
    return false;
  };
  auto note = [&](const Node& ptr_expr, const std::string& via) {
    ptr_expr.Walk([&](const Node& n) {
      if ((is_div(n) || is_cdiv(n)) && !scaled(n, ptr_expr)) {
        for (const auto& b : divided_by(n))
          if (!out.count(b)) out[b] = fmt::format("a pointer at line {} is offset by a value divided by it", line_of(ptr_expr));
        return false;
      }
      if (n.type() != "identifier") return true;
      std::string id(n.text());
      Node par = n.parent();
      if (!par.is_null() && ((par.type() == "attribute" && par.field("attribute") == n) ||
                             (par.type() == "keyword_argument" && par.field("name") == n)))
        return true;
      if (ptrs.count(id) || id == via || scaled(n, ptr_expr)) return true;
      for (const auto& a : as)
        if (a.name == id)
          for (const auto& b : divided_by(a.value))
            if (!out.count(b))
              out[b] = fmt::format("`{}` (line {}) divides by it and offsets a pointer at line {}", id, line_of(a.stmt),
                                   line_of(ptr_expr));
      return true;
    });
  };
  for (const auto& a : as)
    if (ptrs.count(a.name)) note(a.value, a.name);
  for (const auto& mo : k.memops) {
    Node pe = NodeAt(tree, mo.pointer.span);
    if (!pe.is_null()) note(pe, "");
  }
  return out;
}

}  // namespace kiln::rewrite::internal
