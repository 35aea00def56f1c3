// kiln/analysis: scopes and the origin of a name or value at a launch (literal, variable, computed, parameter)
// (Analyzer, see analyzer.h).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/analyzer.h"

namespace kiln::analysis::internal {

auto Analyzer::ScopeOf(const Node& def) -> const Scope& {
  uint32_t key = def.span().begin.byte;
  auto it = scopes_.find(key);
  if (it != scopes_.end()) return it->second;
  Scope s;
  s.def = def;
  CollectAssigns(def.field("body"), s.assigns);
  s.params = ReadParams(def.field("parameters"));
  return scopes_.emplace(key, std::move(s)).first->second;
}

auto Analyzer::EnclosingOf(const Node& n) const -> Enclosing {
  Enclosing e;
  std::vector<std::string> parts;
  for (Node p = n.parent(); !p.is_null(); p = p.parent()) {
    auto t = p.type();
    if (t == "function_definition") {
      e.defs.push_back(p);
      parts.push_back(std::string(p.field("name").text()));
      if (parts.size() > 1 && parts[parts.size() - 2] != "<lambda>") {
      }
    } else if (t == "class_definition") {
      parts.push_back(std::string(p.field("name").text()));
    } else if (t == "lambda") {
      e.in_lambda = true;
      e.lambdas.push_back(p);
    }
  }
  std::reverse(parts.begin(), parts.end());
  // Python qualname: functions nested in functions get ".<locals>.".
  std::string q;
  std::vector<bool> is_def;
  for (Node p = n.parent(); !p.is_null(); p = p.parent()) {
    if (p.type() == "function_definition")
      is_def.push_back(true);
    else if (p.type() == "class_definition")
      is_def.push_back(false);
  }
  std::reverse(is_def.begin(), is_def.end());
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) q += is_def[i - 1] ? ".<locals>." : ".";
    q += parts[i];
  }
  e.qualname = q.empty() ? "<module>" : q;
  return e;
}

const Assign* Analyzer::LastBefore(const std::vector<Assign>& assigns, const std::string& name, uint32_t pos,
                                   bool any_pos, int* count) {
  const Assign* best = nullptr;
  *count = 0;
  for (const auto& a : assigns) {
    if (a.name != name) continue;
    ++*count;
    if (a.pos < pos || any_pos) {
      if (best == nullptr || a.pos > best->pos) best = &a;
    }
  }
  return best;
}

Origin Analyzer::FromAssign(const Assign& a, const std::vector<Assign>& all, const std::string& scope, int count,
                            const Enclosing& enc, uint32_t pos, int depth) {
  Origin o;
  o.variable = a.name;
  o.scope = scope;
  o.multiple_assignments = count > 1;
  if (count > 1) {
    for (const auto& x : all) {
      if (&x == &a || x.name != a.name) continue;
      Assignment as;
      as.name = x.name;
      as.span = x.stmt.span();
      as.value = MakeExpr(x.value.is_null() ? x.stmt : x.value);
      as.literal = !x.value.is_null() && x.kind == Assign::Kind::kPlain && IsLiteralNode(x.value);
      o.other_assignments.push_back(std::move(as));
    }
  }
  if (a.kind == Assign::Kind::kLoopTarget || a.value.is_null() || a.kind == Assign::Kind::kOther) {
    o.kind = OriginKind::kComputed;
    Node e = a.kind == Assign::Kind::kLoopTarget ? a.stmt.field("right") : a.value.is_null() ? a.stmt : a.value;
    o.expression = MakeExpr(e);
    Assignment as;
    as.name = a.name;
    as.span = a.stmt.span();
    as.value = MakeExpr(e);
    o.assignment = as;
    o.note = a.kind == Assign::Kind::kLoopTarget ? "loop variable" : "unpacked from a run-time value";
    return o;
  }
  Assignment as;
  as.name = a.name;
  as.span = a.stmt.span();
  as.value = MakeExpr(a.value);
  as.literal = (IsLiteralNode(a.value) || IsConstantAttr(Unparen(a.value))) && a.kind == Assign::Kind::kPlain;
  o.assignment = as;
  if (as.literal) {
    o.kind = OriginKind::kVariable;
    o.value = as.value.text;
    return o;
  }
  Node v = Unparen(a.value);
  if (a.kind == Assign::Kind::kPlain && v.type() == "identifier" && depth < 6) {
    // x = y: follow y (a literal further up keeps kind variable with that assignment).
    Origin inner = ResolveName(std::string(v.text()), enc, a.pos, depth + 1);
    if (inner.kind == OriginKind::kVariable || inner.kind == OriginKind::kFunctionParam) {
      inner.note = "via " + a.name + (inner.note.empty() ? "" : "; " + inner.note);
      return inner;
    }
  }
  o.kind = OriginKind::kComputed;
  o.expression = as.value;
  if (a.kind == Assign::Kind::kAugmented) o.note = "augmented assignment";
  return o;
}

Origin Analyzer::ResolveName(const std::string& name, const Enclosing& enc, uint32_t pos, int depth) {
  // Enclosing functions, innermost first (closures see the outer function's variables).
  for (size_t i = 0; i < enc.defs.size(); ++i) {
    const Scope& s = ScopeOf(enc.defs[i]);
    int count = 0;
    // In an outer function a closure runs later: any assignment counts.
    const Assign* a = LastBefore(s.assigns, name, pos, i > 0, &count);
    if (a) return FromAssign(*a, s.assigns, "function", count, enc, a->pos, depth);
    for (const auto& fp : s.params) {
      if (fp.name == name) {
        Origin o;
        o.kind = OriginKind::kFunctionParam;
        o.function_param = name;
        o.function_param_default = MakeExpr(fp.default_value);
        if (count > 0) o.multiple_assignments = true;
        return o;
      }
    }
  }
  // Lambda parameters.
  for (const Node& l : enc.lambdas) {
    auto ps = ReadParams(l.field("parameters"));
    for (const auto& fp : ps) {
      if (fp.name == name) {
        Origin o;
        o.kind = OriginKind::kFunctionParam;
        o.function_param = name;
        o.function_param_default = MakeExpr(fp.default_value);
        o.note = "parameter of an enclosing lambda";
        return o;
      }
    }
  }
  int count = 0;
  const Assign* a = LastBefore(module_assigns_, name, pos, !enc.defs.empty(), &count);
  if (a) return FromAssign(*a, module_assigns_, "module", count, enc, a->pos, depth);
  Origin o;
  o.kind = OriginKind::kComputed;
  o.note = "name not assigned in this module";
  return o;
}

Origin Analyzer::ResolveValue(const Node& raw, const Enclosing& enc, uint32_t pos) {
  Node v = Unparen(raw);
  Origin o;
  o.at_launch = MakeExpr(raw);
  if (IsLiteralNode(v) || IsConstantAttr(v)) {
    o.kind = OriginKind::kLiteral;
    o.value = std::string(raw.text());
    return o;
  }
  if (v.type() == "identifier") {
    Origin r = ResolveName(std::string(v.text()), enc, pos);
    r.at_launch = o.at_launch;
    if (r.kind == OriginKind::kComputed && !r.expression.present()) {
      r.expression = o.at_launch;
      r.variable = std::string(v.text());
    }
    return r;
  }
  o.kind = OriginKind::kComputed;
  o.expression = o.at_launch;
  return o;
}

bool Analyzer::IsConstantAttr(const Node& n) const {
  if (n.type() != "attribute") return false;
  std::string c = Canon(Dotted(n));
  if (!(StartsWith(c, "tl.") || StartsWith(c, "torch."))) return false;
  std::string leaf = c.substr(c.rfind('.') + 1);
  static const std::set<std::string_view> kTypes = {
      "float16",     "float32", "float64", "bfloat16", "int8",       "int16",      "int32",       "int64",
      "uint8",       "uint16",  "uint32",  "uint64",   "float8e4nv", "float8e5",   "float8e4b15", "float8_e4m3fn",
      "float8_e5m2", "half",    "float",   "bool",     "int1",       "float8e4b8", "float8e5b16"};
  return kTypes.count(leaf) > 0;
}

std::vector<std::string> Analyzer::ResolveKernelRef(const Node& ref, const Enclosing& enc, uint32_t pos, int depth) {
  Node n = Unparen(ref);
  std::vector<std::string> out;
  if (n.is_null() || depth > 5) return out;
  auto t = n.type();
  if (t == "conditional_expression") {
    auto cs = n.named_children();
    if (cs.size() == 3) {
      for (int i : {0, 2}) {
        auto r = ResolveKernelRef(cs[i], enc, pos, depth + 1);
        out.insert(out.end(), r.begin(), r.end());
      }
    }
    return out;
  }
  if (t == "subscript") {
    // kernels[i] from a list/dict of kernels: any jit name inside its literal.
    return out;
  }
  std::string dotted = Dotted(n);
  if (dotted.empty()) return out;
  std::string leaf = dotted.substr(dotted.rfind('.') + 1);
  if (t == "identifier" && jit_index_.count(dotted)) {
    out.push_back(dotted);
    return out;
  }
  // An alias: look for assignments to the name (function scopes, then module, then anywhere
  // for attributes such as self.kernel).
  std::vector<const Assign*> cands;
  for (const Node& d : enc.defs) {
    const Scope& s = ScopeOf(d);
    for (const auto& a : s.assigns) {
      if (a.name == dotted && a.kind == Assign::Kind::kPlain) cands.push_back(&a);
    }
    if (!cands.empty()) break;
  }
  if (cands.empty()) {
    for (const auto& a : module_assigns_) {
      if (a.name == dotted && a.kind == Assign::Kind::kPlain) cands.push_back(&a);
    }
  }
  if (cands.empty() && t == "attribute") {
    for (const auto& [key, s] : AllScopes()) {
      for (const auto& a : s->assigns) {
        if (a.kind == Assign::Kind::kPlain && a.stmt.type() == "assignment" && EndsWith(a.name, "." + leaf)) {
          cands.push_back(&a);
        }
      }
    }
  }
  for (const Assign* a : cands) {
    if (a->value.is_null()) continue;
    auto r = ResolveKernelRef(a->value, enc, a->pos, depth + 1);
    for (auto& x : r) {
      if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
    }
  }
  if (out.empty() && t == "attribute" && jit_index_.count(leaf)) out.push_back(leaf);  // module.kernel
  return out;
}

auto Analyzer::AllScopes() -> const std::vector<std::pair<uint32_t, const Scope*>>& {
  if (!all_scopes_done_) {
    all_scopes_done_ = true;
    std::vector<Node> defs;
    tree_.root().Walk([&](const Node& n) {
      if (n.type() == "function_definition") defs.push_back(n);
      return true;
    });
    for (const Node& d : defs) all_scopes_.emplace_back(d.span().begin.byte, &ScopeOf(d));
  }
  return all_scopes_;
}

}  // namespace kiln::analysis::internal
