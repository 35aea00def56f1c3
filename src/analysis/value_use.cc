// kiln/analysis: constexprs whose value enters the computed data (ValueConstexprs, see dataflow.h).
#include <fmt/format.h>
#include <algorithm>
#include <functional>

#include "analysis/dataflow.h"
#include "pyast/syntax.h"

namespace kiln::analysis {

using namespace pyast;  // NOLINT: the syntax helpers

namespace {

struct ValueUse {
  const Tree& tree;
  const ModuleModel& m;
  std::set<std::string> mods;  // tl, triton, math: module names inside expressions

  // Walks `body` without entering nested definitions.
  template <class F>
  void Each(const Node& body, F&& f) const {
    body.Walk([&](const Node& n) {
      if (!(n == body) && (n.type() == "function_definition" || n.type() == "class_definition" || n.type() == "lambda"))
        return false;
      f(n);
      return true;
    });
  }

  static bool IsLoadCall(const Node& n) {
    if (n.type() != "call") return false;
    std::string_view f = n.field("function").text();
    return CalleeIs(f, "load") || CalleeIs(f, "_experimental_descriptor_load") ||
           f.find("atomic_") != std::string_view::npos;
  }

  bool IsData(const Node& e, const std::set<std::string>& data) const {
    bool d = false;
    std::function<bool(const Node&)> visit = [&](const Node& n) {
      if (d) return false;
      // A comparison yields a mask: loaded values only decide which lanes are on (block_mask =
      // tl.where(start < seq_len, 1, 0) bounds a loop; its magnitude is not data).
      if (n.type() == "comparison_operator" && !(n == e)) return false;
      if (IsLoadCall(n)) d = true;
      std::string_view t = n.type();
      if (t == "attribute" || t == "keyword_argument") {  // the name after '.' or before '=' is no value
        n.field(t == "attribute" ? "object" : "value").Walk(visit);
        return false;
      }
      if (t == "identifier" && data.count(std::string(n.text()))) d = true;
      return !d;
    };
    e.Walk(visit);
    return d;
  }

  // An expression of constexprs (and literals / module attributes) only; the constexprs it reads.
  std::set<std::string> PureC(const Node& e, const std::map<std::string, std::set<std::string>>& cs) const {
    std::set<std::string> out;
    // Scalar functions of constants only: tl.arange(0, BLOCK) and tl.zeros([BLOCK]) are index vectors
    // and buffers (their values do not depend on the tile size the way `x * BLOCK` does).
    static const std::set<std::string> kScalarFns = {"to",      "cdiv",    "constexpr", "exp",   "exp2", "log",
                                                     "log2",    "sqrt",    "rsqrt",     "abs",   "min",  "max",
                                                     "minimum", "maximum", "int",       "float", "bool", "pow"};
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
      if (it != cs.end()) {
        out.insert(it->second.begin(), it->second.end());
        continue;
      }
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
        if (!out.count(n)) out[n] = fmt::format("{} at line {}{}", how, at.span().begin.line, where);
    };
    auto text = [](const Node& n) {
      std::string t;
      for (char ch : n.text()) {
        bool sp = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
        if (sp && (t.empty() || t.back() == ' ' || t.back() == '(')) continue;
        t += sp ? ' ' : ch;
      }
      if (t.size() > 60) t = std::string(Prefix(t, 57)) + "...";
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
          if (a.type() == "keyword_argument")
            kws.push_back({std::string(a.field("name").text()), a.field("value")});
          else if (a.type() != "comment")
            pos.push_back(a);
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
            "load",          "arange",         "zeros",        "full",
            "reshape",       "view",           "broadcast_to", "expand_dims",
            "program_id",    "num_programs",   "multiple_of",  "max_contiguous",
            "max_constancy", "make_block_ptr", "advance",      "make_tensor_descriptor",
            "range",         "static_range",   "cdiv",         "to",
            "static_assert", "device_assert",  "static_print", "device_print",
            "zeros_like",    "full_like",      "split",        "permute",
            "trans"};
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

}  // namespace kiln::analysis
