// kiln/rewrite: LiftLiterals, literal tile sizes in a kernel body become constexpr parameters (issue 21).
//
// `offs = pid * 1024 + tl.arange(0, 1024)` hides its block size from every tuner. The rewrite names it:
// `KILN_BLOCK0: tl.constexpr = 1024` is appended to the signature and every occurrence of the literal in
// the body becomes the name, so the module computes exactly what it did (the default is the literal) and
// SetParams can retune it afterwards. Only literals that are visibly tile sizes are lifted; the data
// constraints (divisors, per-block data, the grid following it) are judged by ExtractTunables on the
// lifted module, like any constexpr's.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>

#include "rewrite/plan.h"

namespace kiln::rewrite::internal {

namespace {

// The callee's last component (`tl.arange` -> "arange").
std::string CalleeName(const Node& call) {
  if (call.is_null() || call.type() != "call") return "";
  std::string f(call.field("function").text());
  auto dot = f.rfind('.');
  return dot == std::string::npos ? f : f.substr(dot + 1);
}

// Index of `n` among the positional arguments of the argument list `args` (-1 when a keyword's value).
int ArgIndex(const Node& args, const Node& n) {
  int i = 0;
  for (const Node& a : args.named_children()) {
    if (a == n) return i;
    if (a.type() != "keyword_argument" && a.type() != "comment") ++i;
  }
  return -1;
}

// Whether the integer literal `lit` (skipping parentheses and a unary minus) sits where a tile size
// does: a tl.arange bound, a factor of a product, a range step, an increment, an element of a block
// shape, the divisor of tl.cdiv, a multiple_of/max_contiguous hint.
bool TilingPosition(const Node& lit) {
  Node n = lit, p = lit.parent();
  while (!p.is_null() && p.type() == "parenthesized_expression") n = p, p = p.parent();
  if (p.is_null()) return false;
  const std::string_view pt = p.type();
  if (pt == "binary_operator") return p.field("operator").text() == "*";
  if (pt == "augmented_assignment") {
    std::string_view op = p.field("operator").text();
    return p.field("right") == n && (op == "+=" || op == "-=");
  }
  if (pt == "tuple" || pt == "list") {
    Node g = p.parent();
    if (!g.is_null() && g.type() == "keyword_argument") g = g.parent();
    if (g.is_null() || g.type() != "argument_list") return false;
    static const std::set<std::string> shapes = {"zeros", "full", "reshape", "view", "broadcast_to", "zeros_like",
                                                 "make_block_ptr", "load_tensor_descriptor", "make_tensor_descriptor"};
    return shapes.count(CalleeName(g.parent())) > 0;
  }
  if (pt == "keyword_argument") {
    std::string_view k = p.field("name").text();
    return k == "block_shape" || k == "step";
  }
  if (pt != "argument_list") return false;
  const std::string f = CalleeName(p.parent());
  const int i = ArgIndex(p, n);
  if (f == "arange") return i == 1;
  if (f == "range" || f == "static_range") return i == 2;
  if (f == "cdiv") return i == 1;
  return f == "multiple_of" || f == "max_contiguous";
}

// Integer literal nodes equal to `value` under `scope`, outside the spans in `skip`.
std::vector<Node> LiteralsOf(const Node& scope, int64_t value, const std::vector<Span>& skip = {}) {
  std::vector<Node> out;
  scope.Walk([&](const Node& n) {
    for (const Span& s : skip)
      if (s.Contains(n.span())) return false;
    if (n.type() == "integer" && ParseIntLiteral(n.text()) == value) out.push_back(n);
    return true;
  });
  return out;
}

std::string Where(const Node& n) {
  std::string t(EnclosingStatement(n).text());
  if (t.find('\n') != std::string::npos) t = t.substr(0, t.find('\n')) + " ...";
  t = Trim(t);
  if (t.size() > 70) t = std::string(pyast::Prefix(t, 67)) + "...";
  return fmt::format("line {}: {}", n.span().begin.line, t);
}

// Why literal `value` must stay as written (empty when it may be lifted): a use in the body that is not
// a tiling position, host code of a launching function that uses the same number (a buffer sized for
// it, a loop over its blocks: the caller relies on it), or a called jit function that does.
std::string Blocker(const Ctx& c, const std::vector<Node>& uses, int64_t value) {
  for (const Node& u : uses)
    if (!TilingPosition(u)) return "also used in the kernel other than as a tile size (" + Where(u) + ")";
  std::set<uint32_t> seen;
  for (int li : c.launches) {
    const Launch& l = c.model.launches[li];
    Node scope = EnclosingFunction(c.tree, l.span.begin.byte);
    if (scope.is_null()) scope = c.tree.root();
    if (!seen.insert(scope.span().begin.byte).second) continue;
    std::vector<Span> skip;
    for (const auto& k : c.model.kernels) skip.push_back(k.span);
    for (int lj : c.launches)
      if (c.model.launches[lj].grid.expr.present()) skip.push_back(c.model.launches[lj].grid.expr.span);
    for (const Node& h : LiteralsOf(scope, value, skip))
      return "host code uses the same number, so the caller may rely on it (" + Where(h) + ")";
  }
  for (const auto& call : c.kernel.calls) {
    const Kernel* h = c.model.FindKernel(call.callee);
    if (!h || h == &c.kernel) continue;
    auto in_helper = LiteralsOf(KernelDef(c.tree, *h).field("body"), value);
    if (!in_helper.empty()) return "the called jit function " + h->name + " uses it too (" + Where(in_helper[0]) + ")";
  }
  return "";
}

// A parameter name not used anywhere in the module: KILN_BLOCK0, KILN_BLOCK1, ...
std::string FreshName(const Ctx& c, int* next) {
  std::set<std::string> used = IdentifierNames(c.tree.root());
  while (true) {
    std::string n = "KILN_BLOCK" + std::to_string((*next)++);
    if (!used.count(n)) return n;
  }
}

}  // namespace

Result<Plan> PlanLiftLiterals(const Ctx& c, const LiftLiterals& r) {
  const Kernel& k = c.kernel;
  // The candidates: tl.arange(0, L) bounds of the kernel's own body, L a power of two >= 16.
  std::vector<int64_t> values;
  for (const auto& a : k.aranges) {
    auto lo = ParseIntLiteral(a.start.text), hi = ParseIntLiteral(a.end.text);
    if (!lo || *lo != 0 || !hi || *hi < 16 || !IsPowerOfTwo(*hi)) continue;
    if (!r.values.empty() && std::find(r.values.begin(), r.values.end(), *hi) == r.values.end()) continue;
    if (std::find(values.begin(), values.end(), *hi) == values.end()) values.push_back(*hi);
  }
  for (int64_t v : r.values)
    if (std::find(values.begin(), values.end(), v) == values.end())
      return Refuse(fmt::format("{} is not a literal tl.arange(0, {}) bound of {} (a power of two, at least 16)", v, v,
                                k.name));
  if (values.empty())
    return Refuse("no literal tile size in " + k.name + " (a tl.arange(0, L) bound, L a power of two >= 16)");
  const Node body = KernelDef(c.tree, k).field("body");
  const std::string tl = analysis::TlAlias(c.model);
  Plan plan;
  std::vector<std::string> fixed;
  int next = 0;
  for (int64_t v : values) {
    std::vector<Node> uses = LiteralsOf(body, v);
    if (std::string why = Blocker(c, uses, v); !why.empty()) {
      fixed.push_back(fmt::format("literal {} stays fixed: {}", v, why));
      continue;
    }
    const std::string name = FreshName(c, &next);
    for (const Node& u : uses) KILN_RETURN_IF_ERROR(plan.edits.Replace(u.span(), name));
    KILN_RETURN_IF_ERROR(AppendKernelParam(c, plan.edits, fmt::format("{}: {}.constexpr = {}", name, tl, v)));
    std::string lines;
    std::set<uint32_t> ls;
    for (const Node& u : uses)
      if (ls.insert(u.span().begin.line).second) lines += (lines.empty() ? "" : ", ") + std::to_string(u.span().begin.line);
    plan.notes.push_back(fmt::format("literal {} (line{} {}) -> constexpr {} = {}", v, ls.size() > 1 ? "s" : "", lines,
                                     name, v));
  }
  if (plan.edits.empty()) {
    std::string all;
    for (const auto& f : fixed) all += (all.empty() ? "" : "; ") + f;
    return Refuse(all);
  }
  for (auto& f : fixed) plan.notes.push_back(std::move(f));
  return plan;
}

}  // namespace kiln::rewrite::internal
