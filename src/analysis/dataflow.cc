// kiln/analysis: scopes, program-id and tile facts, grid relations (see dataflow.h).
#include <fmt/format.h>
#include <algorithm>

#include "analysis/dataflow.h"
#include "pyast/syntax.h"

namespace kiln::analysis {

using namespace pyast;  // NOLINT: the syntax helpers

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
    s.local = AssignmentsIn(fn.field("body"), /*unpacked=*/true);  // `NK, NV = cdiv(K, BK), cdiv(V, BV)`
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
                                      const std::map<std::string, std::string>& vars, uint32_t before, int depth,
                                      const std::map<std::string, std::string>* literals) {
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

Node KernelDef(const Tree& tree, const Kernel& k) {
  Node n = NodeAt(tree, k.def_span);
  while (!n.is_null() && n.type() != "function_definition") n = n.parent();
  return n;
}

std::set<std::string> PidVars(const Tree& tree, const Kernel& k) {
  std::set<std::string> vars;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return vars;
  auto as = AssignmentsIn(def.field("body"), /*unpacked=*/true);  // `i_v, i_k = tl.program_id(0), ...`
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
    auto ends = [&](std::string_view name) { return CalleeIs(f, name); };
    Node args = n.field("arguments");
    if (ends("arange")) {
      if (args.named_child_count() >= 2)
        add_from(args.named_child(1));
      else if (args.named_child_count() == 1)
        add_from(args.named_child(0));
    } else if (ends("zeros") || ends("full") || ends("reshape") || ends("broadcast_to")) {
      if (args.named_child_count() >= 1) {
        Node a0 = args.named_child(0);
        if (a0.type() == "tuple" || a0.type() == "list" || a0.type() == "identifier") add_from(a0);
      }
    } else if (ends("make_block_ptr") || ends("make_tensor_descriptor")) {
      for (const Node& a : args.named_children())
        if (a.type() == "keyword_argument" && a.field("name").text() == "block_shape") add_from(a.field("value"));
    }
    return true;
  });
  return out;
}

std::map<std::string, std::vector<TileShape>> TileShapes(const Tree& tree, const Kernel& k) {
  std::set<std::string> cx;
  for (const auto& p : k.params)
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
  std::map<std::string, std::vector<TileShape>> out;
  auto add_shape = [&](const Node& shape) {
    if (shape.type() != "tuple" && shape.type() != "list") return;
    TileShape dims;
    std::set<std::string> named;
    for (const Node& d : shape.named_children()) {
      if (d.type() == "integer") {
        dims.emplace_back(d.text());
      } else if (d.type() == "identifier" && cx.count(std::string(d.text()))) {
        dims.emplace_back(d.text());
        named.insert(std::string(d.text()));
      } else {
        return;  // a dimension kiln cannot evaluate (`BLOCK // 2`, a run-time value): no tile recorded
      }
    }
    if (dims.size() < 2) return;
    for (const auto& n : named) {
      auto& v = out[n];
      if (std::find(v.begin(), v.end(), dims) == v.end()) v.push_back(dims);
    }
  };
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  auto is_arange = [](const Node& n) { return n.type() == "call" && CalleeIs(n.field("function").text(), "arange"); };
  // Variables that hold one tl.arange over a constexpr (`cols = pid1 * B + tl.arange(0, B)`, `mask = cols < n`),
  // assigned once: name -> the constexpr.
  std::map<std::string, std::string> arange_of;
  auto bound_of = [&](const Node& e) {  // the one constexpr the tl.arange calls in `e` run to ("" if none or several)
    std::set<std::string> found;
    e.Walk([&](const Node& n) {
      if (is_arange(n)) {
        Node args = n.field("arguments");
        Node end = args.named_child_count() >= 2 ? args.named_child(1) : args.named_child(0);
        if (!end.is_null() && end.type() == "identifier" && cx.count(std::string(end.text())))
          found.insert(std::string(end.text()));
        else
          found.insert("");  // an arange kiln cannot evaluate
        return false;
      }
      if (n.type() == "identifier")
        if (auto it = arange_of.find(std::string(n.text())); it != arange_of.end()) found.insert(it->second);
      return true;
    });
    return found.size() == 1 ? *found.begin() : std::string();
  };
  {
    auto as = AssignmentsIn(def.field("body"));
    std::map<std::string, int> count;
    for (const auto& a : as) ++count[a.name];
    for (int pass = 0; pass < 2; ++pass)  // one level of variables built on others
      for (const auto& a : as)
        if (count[a.name] == 1 && !a.augmented)
          if (std::string b = bound_of(a.value); !b.empty()) arange_of[a.name] = b;
  }
  // Broadcasts of two such ranges in one statement (`rows[:, None] * stride + cols[None, :]`): the tile
  // [rows' constexpr, cols' constexpr].
  std::map<uint32_t, std::pair<std::set<std::string>, std::set<std::string>>> by_statement;
  def.field("body").Walk([&](const Node& n) {
    if (n.type() != "subscript") return true;
    // The indices: the named children after the value (tree-sitter's field name of a child is unreliable past
    // anonymous `,` nodes).
    std::vector<Node> subs = n.named_children();
    if (subs.size() != 3) return true;
    subs.erase(subs.begin());
    int axis = -1;
    if (subs[0].type() == "slice" && subs[1].type() == "none") axis = 0;
    if (subs[0].type() == "none" && subs[1].type() == "slice") axis = 1;
    if (axis < 0) return true;
    std::string b = bound_of(n.field("value"));
    if (b.empty()) return true;
    Node st = n;
    while (!st.parent().is_null() && st.parent().type() != "block" && st.parent().type() != "module") st = st.parent();
    auto& sides = by_statement[st.span().begin.byte];
    (axis == 0 ? sides.first : sides.second).insert(b);
    return true;
  });
  for (const auto& [at, sides] : by_statement)
    for (const auto& r : sides.first)
      for (const auto& c : sides.second) {
        TileShape dims = {r, c};
        for (const auto& n : std::set<std::string>{r, c}) {
          auto& v = out[n];
          if (std::find(v.begin(), v.end(), dims) == v.end()) v.push_back(dims);
        }
      }
  def.field("body").Walk([&](const Node& n) {
    if (n.type() != "call") return true;
    std::string_view f = n.field("function").text();
    auto ends = [&](std::string_view name) { return CalleeIs(f, name); };
    Node args = n.field("arguments");
    if ((ends("zeros") || ends("full")) && args.named_child_count() >= 1) {
      add_shape(args.named_child(0));
    } else if (ends("make_block_ptr")) {
      for (const Node& a : args.named_children())
        if (a.type() == "keyword_argument" && a.field("name").text() == "block_shape") add_shape(a.field("value"));
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
std::string TritonAlias(const ModuleModel& m) { return m.triton_aliases.empty() ? "triton" : m.triton_aliases[0]; }

GridRelation RelateGrid(const Tree& tree, const Launch& l, const std::string& name) {
  GridRelation g;
  if (std::find(l.grid.meta_keys.begin(), l.grid.meta_keys.end(), name) != l.grid.meta_keys.end()) {
    g.depends = g.via_meta = true;
    return g;
  }
  const Binding* b = l.FindBinding(name);
  if (!l.grid.expr.present()) return g;
  Node grid = NodeAt(tree, l.grid.expr.span);
  uint32_t pos = l.span.begin.byte;
  if (b) {
    std::string var = !b->origin.variable.empty() ? b->origin.variable : b->origin.function_param;
    if (!var.empty() && DependsOn(tree, grid, var, pos)) {
      g.depends = true;
      return g;
    }
    // The launch passes the name itself (e.g. BLOCK=BLOCK) through another variable.
    if (b->origin.at_launch.present() && IsIdentifier(b->origin.at_launch.text) &&
        DependsOn(tree, grid, b->origin.at_launch.text, pos)) {
      g.depends = true;
      return g;
    }
  }
  if (std::find(l.grid.constexprs.begin(), l.grid.constexprs.end(), name) != l.grid.constexprs.end()) {
    g.depends = true;
    return g;
  }
  // A literal in the grid equal to the current value (e.g. grid=(triton.cdiv(n, 1024),)).
  std::string value = b ? b->origin.value : "";
  if (b && b->origin.kind == OriginKind::kDefault) value = b->origin.value;
  if (!ParseIntLiteral(value)) return g;
  Node base = grid;
  if (l.grid.kind == GridKind::kVariable && l.grid.assignment) base = NodeAt(tree, l.grid.assignment->value.span);
  int found = 0;
  Span at;
  base.Walk([&](const Node& n) {
    if (n.type() == "integer" && ParseIntLiteral(n.text()) == ParseIntLiteral(value)) {
      ++found;
      at = n.span();
    }
    return true;
  });
  if (found == 1) g.literal = at;
  return g;
}

}  // namespace kiln::analysis
