// kiln/analysis: launch sites: arguments mapped to parameters, bindings of constexprs and options, grids (Analyzer, see
// analyzer.h).
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

void Analyzer::FindLaunches() {
  std::vector<Node> calls;
  tree_.root().Walk([&](const Node& n) {
    if (n.type() == "call" && n.field("function").type() == "subscript") calls.push_back(n);
    return true;
  });
  for (const Node& call : calls) {
    // Inside a jit function body a subscript-call is not a launch.
    bool in_jit = false;
    for (const auto& w : work_) {
      if (w.def.span().Contains(call.span())) {
        in_jit = true;
      }
    }
    if (in_jit) continue;
    Node sub = call.field("function");
    Node ref = sub.field("value");
    Enclosing enc = EnclosingOf(call);
    uint32_t pos = call.span().begin.byte;
    auto kernels = ResolveKernelRef(ref, enc, pos);
    if (kernels.empty()) {
      std::string leaf = Dotted(ref);
      if (!leaf.empty() && !kModuleNames.count(SplitDots(leaf).front())) {
        model_.notes.push_back("line " + std::to_string(call.span().begin.line) + ": " + std::string(ref.text()) +
                               "[...](...) does not launch a @triton.jit function of this module");
      }
      continue;
    }
    // A launch whose callee is chosen at run time (`fx = a if c else b; fx[grid](...)`) is one Launch per
    // candidate kernel, each with its arguments mapped to that kernel's parameters; they share the span.
    for (const auto& kn : kernels) {
      Launch l;
      l.span = call.span();
      l.args_span = call.field("arguments").span();
      l.kernel = kn;
      if (kernels.size() > 1) l.kernel_candidates = kernels;
      l.kernel_ref = MakeExpr(ref);
      l.enclosing_function = enc.qualname;
      l.enclosing_span = enc.defs.empty() ? tree_.root().span() : enc.defs[0].span();
      l.in_lambda = enc.in_lambda;
      Kernel& k = model_.kernels[jit_index_.at(l.kernel)];
      k.launched = true;
      MapArgs(call, k, l);
      ReadGrid(sub, enc, pos, k, l);
      Bind(k, l, enc, pos);
      GridConstexprs(k, l);
      model_.launches.push_back(std::move(l));
    }
  }
}

Node Analyzer::DictSplatValue(const std::string& name, const Launch& l, const Enclosing& enc, uint32_t pos) {
  for (size_t i = 0; i < l.args.size(); ++i) {
    Node c = arg_nodes_[i];
    if (c.type() != "dictionary_splat") continue;
    Node d = Unparen(c.named_child(0));
    if (d.type() == "identifier") {
      std::string v(d.text());
      d = Node();
      for (size_t si = 0; si < enc.defs.size() && d.is_null(); ++si) {
        int count = 0;
        const Assign* a = LastBefore(ScopeOf(enc.defs[si]).assigns, v, pos, si > 0, &count);
        if (a && !a->value.is_null()) d = Unparen(a->value);
      }
    }
    if (d.type() == "dictionary") {
      for (const Node& pair : d.named_children()) {
        if (pair.type() == "pair" && pyast::StringLiteralValue(pair.field("key")) == name) return pair.field("value");
      }
    } else if (d.type() == "call" && Dotted(d.field("function")) == "dict") {
      CallArgs a = ReadArgs(d.field("arguments"));
      Node v = a.keyword(name);
      if (!v.is_null()) return v;
    }
  }
  return {};
}

Origin Analyzer::SplatOrigin(const Launch& l, const Enclosing& enc, uint32_t pos) {
  Origin o;
  o.kind = OriginKind::kMissing;
  for (size_t i = 0; i < l.args.size(); ++i) {
    Node c = arg_nodes_[i];
    if (c.type() != "dictionary_splat" && c.type() != "list_splat") continue;
    if (c.type() == "list_splat" && SplatSize(c) >= 0) continue;
    Node e = Unparen(c.named_child(0));
    Node root = e;
    while (true) {
      if (root.type() == "attribute")
        root = root.field("object");
      else if (root.type() == "call")
        root = root.field("function");
      else if (root.type() == "subscript")
        root = root.field("value");
      else
        break;
    }
    o.at_launch = MakeExpr(c);
    o.note = "through " + std::string(c.text());
    if (root.type() == "identifier") {
      Origin r = ResolveName(std::string(root.text()), enc, pos);
      if (r.kind == OriginKind::kFunctionParam) {
        r.at_launch = o.at_launch;
        r.note = o.note;
        return r;
      }
    }
    o.kind = OriginKind::kComputed;
    o.expression = MakeExpr(c);
    if (c.type() == "dictionary_splat") return o;  // prefer the **kwargs explanation
  }
  return o;
}

int Analyzer::SplatSize(const Node& splat) {
  Node v = Unparen(splat.named_child(0));
  auto t = v.type();
  if (t == "tuple" || t == "list") return static_cast<int>(v.named_child_count());
  if (t == "conditional_expression") {
    auto cs = v.named_children();
    if (cs.size() == 3) {
      Node a = Unparen(cs[0]), b = Unparen(cs[2]);
      if ((a.type() == "tuple" || a.type() == "list") && (b.type() == "tuple" || b.type() == "list") &&
          a.named_child_count() == b.named_child_count()) {
        return static_cast<int>(a.named_child_count());
      }
    }
  }
  return -1;
}

void Analyzer::MapArgs(const Node& call, const Kernel& k, Launch& l) {
  arg_nodes_.clear();
  std::vector<Node> items;
  for (const Node& c : call.field("arguments").named_children()) {
    if (c.type() != "comment") items.push_back(c);
  }
  // Positional arguments after the last *splat of unknown length are aligned to end just before
  // the first parameter that is bound otherwise (keyword, autotune, heuristics).
  int last_unknown = -1, npost = 0;
  std::set<std::string> kw_names;
  for (size_t j = 0; j < items.size(); ++j) {
    auto t = items[j].type();
    if (t == "list_splat" && SplatSize(items[j]) < 0) {
      last_unknown = static_cast<int>(j);
      npost = 0;
    } else if (t == "keyword_argument") {
      kw_names.insert(std::string(items[j].field("name").text()));
    } else if (t != "dictionary_splat" && t != "list_splat") {
      ++npost;
    }
  }
  int post_start = -1;
  if (last_unknown >= 0) {
    int m = static_cast<int>(k.params.size());
    for (size_t pi = 0; pi < k.params.size(); ++pi) {
      const std::string& n = k.params[pi].name;
      bool bound = kw_names.count(n) > 0;
      if (k.autotune && std::find(k.autotune->tuned_names.begin(), k.autotune->tuned_names.end(), n) !=
                            k.autotune->tuned_names.end()) {
        bound = true;
      }
      if (k.heuristics) {
        for (const auto& h : k.heuristics->entries) bound = bound || h.name == n;
      }
      if (bound) {
        m = static_cast<int>(pi);
        break;
      }
    }
    post_start = m - npost;
  }
  int i = 0;
  bool unknown = false;
  for (size_t j = 0; j < items.size(); ++j) {
    const Node& c = items[j];
    auto t = c.type();
    LaunchArg arg;
    if (t == "keyword_argument") {
      arg.keyword = std::string(c.field("name").text());
      arg.value = MakeExpr(c.field("value"));
      arg.span = c.span();
      if (k.FindParam(arg.keyword))
        arg.param = arg.keyword;
      else if (!kLaunchOptions.count(arg.keyword))
        l.unmapped.push_back(arg.keyword);
    } else if (t == "list_splat" || t == "dictionary_splat") {
      arg.splat = true;
      arg.value = MakeExpr(c);
      arg.span = c.span();
      if (t == "list_splat") {
        int n = SplatSize(c);
        if (n < 0) {
          unknown = true;
          if (static_cast<int>(j) == last_unknown && post_start >= 0) {
            i = post_start;
            unknown = false;
            post_inferred_ = true;
          }
        } else {
          // Each element of the literal binds one parameter; record them as arguments too.
          arg_nodes_.push_back(c);
          l.args.push_back(std::move(arg));
          Node v = Unparen(c.named_child(0));
          if (v.type() == "conditional_expression") v = Unparen(v.named_child(0));
          for (const Node& e : v.named_children()) {
            LaunchArg ea;
            ea.position = i;
            ea.value = MakeExpr(e);
            ea.span = e.span();
            if (static_cast<size_t>(i) < k.params.size() && !unknown) ea.param = k.params[i].name;
            ea.position_inferred = post_inferred_;
            ++i;
            arg_nodes_.push_back(e);
            l.args.push_back(std::move(ea));
          }
          continue;
        }
      }
    } else {
      arg.value = MakeExpr(c);
      arg.span = c.span();
      if (!unknown) {
        arg.position = i;
        arg.position_inferred = post_inferred_;
        if (i >= 0 && static_cast<size_t>(i) < k.params.size()) arg.param = k.params[i].name;
      }
      ++i;
    }
    arg_nodes_.push_back(t == "keyword_argument" ? c.field("value") : c);
    l.args.push_back(std::move(arg));
  }
  post_inferred_ = false;
}

void Analyzer::Bind(const Kernel& k, Launch& l, const Enclosing& enc, uint32_t pos) {
  bool splat = std::any_of(l.args.begin(), l.args.end(), [](const LaunchArg& a) { return a.splat; });
  auto find_arg = [&](const std::string& name) -> int {
    for (size_t i = 0; i < l.args.size(); ++i) {
      if (l.args[i].param == name || (l.args[i].param.empty() && l.args[i].keyword == name)) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  auto in_heuristics = [&](const std::string& name) -> const HeuristicsEntry* {
    if (!k.heuristics) return nullptr;
    for (const auto& h : k.heuristics->entries) {
      if (h.name == name) return &h;
    }
    return nullptr;
  };
  auto in_autotune = [&](const std::string& name) {
    return k.autotune && std::find(k.autotune->tuned_names.begin(), k.autotune->tuned_names.end(), name) !=
                             k.autotune->tuned_names.end();
  };
  auto bind = [&](const std::string& name, bool option, const Param* p) {
    Binding b;
    b.name = name;
    b.launch_option = option;
    b.arg = find_arg(name);
    if (b.arg >= 0) {
      b.origin = ResolveValue(arg_nodes_[b.arg], enc, pos);
      if (!option && in_autotune(name)) b.origin.note = "also set by an autotune config (Triton rejects this)";
    } else if (const HeuristicsEntry* h = in_heuristics(name); h != nullptr && !option) {
      b.origin.kind = OriginKind::kHeuristics;
      b.origin.heuristic = *h;
      b.origin.decorator_span = k.heuristics->span;
      b.origin.expression = h->value;
    } else if (k.autotune && (option || in_autotune(name))) {
      b.origin.kind = OriginKind::kAutotune;
      b.origin.decorator_span = k.autotune->span;
      if (option && std::find(k.autotune->tuned_options.begin(), k.autotune->tuned_options.end(), name) ==
                        k.autotune->tuned_options.end()) {
        b.origin.note = "no config sets it: Triton's default for every config";
      }
    } else if (Node dv = DictSplatValue(name, l, enc, pos); !dv.is_null()) {
      b.origin = ResolveValue(dv, enc, pos);
      b.origin.note = "from a dict literal passed with **";
    } else if (p != nullptr && p->default_value.present()) {
      b.origin.kind = OriginKind::kDefault;
      b.origin.value = p->default_value.text;
      b.origin.expression = p->default_value;
    } else if (option) {
      b.origin.kind = OriginKind::kDefault;
      b.origin.value = name == "num_warps" ? "4" : name == "num_stages" ? "3" : name == "num_ctas" ? "1" : "None";
      b.origin.note = "Triton's default";
    } else if (splat) {
      b.origin = SplatOrigin(l, enc, pos);
    } else {
      b.origin.kind = OriginKind::kMissing;
    }
    l.bindings.push_back(std::move(b));
  };
  for (const auto& p : k.params) {
    if (p.kind == ParamKind::kConstexpr) bind(p.name, false, &p);
  }
  for (const char* opt : {"num_warps", "num_stages", "num_ctas", "maxnreg"}) {
    // A kernel parameter of the same name takes the value (bound above when constexpr).
    if (k.FindParam(opt) == nullptr) bind(opt, true, nullptr);
  }
}

void Analyzer::ReadGrid(const Node& sub, const Enclosing& enc, uint32_t pos, const Kernel& k, Launch& l) {
  // The indices are the named children after the value: tree-sitter's field name of a child is off past an
  // anonymous `,` (`k[4, 8]` read as the dims "4" and ",").
  std::vector<Node> subs = sub.named_children();
  if (!subs.empty()) subs.erase(subs.begin());
  std::erase_if(subs, [](const Node& n) { return n.type() == "comment"; });
  bool trailing_comma = false;
  for (uint32_t i = 0; i < sub.child_count(); ++i)
    if (sub.child(i).type() == "," && i + 2 == sub.child_count()) trailing_comma = true;
  if (subs.empty()) return;
  Grid& g = l.grid;
  Span whole{subs.front().span().begin, subs.back().span().end};
  g.expr = {tree_.text().substr(whole.begin.byte, whole.size()), whole};
  Node expr;
  if (subs.size() > 1 || trailing_comma) {
    g.kind = GridKind::kTuple;
    for (const Node& s : subs) g.dims.push_back(MakeExpr(s));
    g.resolved = g.expr;
    g.resolved_kind = GridKind::kTuple;
    for (const Node& s : subs) GridNames(s, g, "");
    return;
  }
  expr = Unparen(subs[0]);
  g.kind = ClassifyGrid(expr);
  Node resolved = expr;
  if (g.kind == GridKind::kVariable) {
    std::string name(expr.text());
    Node fn_def;
    const Assign* a = nullptr;
    int count = 0;
    for (size_t i = 0; i < enc.defs.size() && a == nullptr; ++i) {
      const Scope& s = ScopeOf(enc.defs[i]);
      a = LastBefore(s.assigns, name, pos, i > 0, &count);
      if (a == nullptr) {
        enc.defs[i].field("body").Walk([&](const Node& n) {
          if (n.type() == "function_definition" && n.field("name").text() == name) fn_def = n;
          return fn_def.is_null() && (n.type() != "function_definition" || n == enc.defs[i]);
        });
        if (!fn_def.is_null()) break;
      }
    }
    if (a == nullptr && fn_def.is_null()) {
      a = LastBefore(module_assigns_, name, pos, !enc.defs.empty(), &count);
      if (a == nullptr) fn_def = ModuleFunction(name);
    }
    if (a != nullptr && !a->value.is_null()) {
      Assignment as;
      as.name = name;
      as.span = a->stmt.span();
      as.value = MakeExpr(a->value);
      as.literal = IsLiteralNode(a->value);
      g.assignment = as;
      resolved = Unparen(a->value);
    } else if (!fn_def.is_null()) {
      // def grid(meta): return (...)
      Assignment as;
      as.name = name;
      as.span = fn_def.span();
      as.value = MakeExpr(fn_def);
      g.assignment = as;
      g.resolved_kind = GridKind::kLambda;
      auto ps = ReadParams(fn_def.field("parameters"));
      if (!ps.empty()) g.meta_param = ps[0].name;
      Node ret;
      fn_def.field("body").Walk([&](const Node& n) {
        if (n.type() == "return_statement" && ret.is_null()) ret = n.named_child(0);
        return ret.is_null();
      });
      g.resolved = MakeExpr(ret);
      if (!ret.is_null()) {
        ret = Unparen(ret);
        if (ret.type() == "tuple" || ret.type() == "expression_list") {
          for (const Node& c : ret.named_children()) g.dims.push_back(MakeExpr(c));
        } else {
          g.dims.push_back(MakeExpr(ret));
        }
      }
      GridNames(fn_def.field("body"), g, g.meta_param);
      return;
    } else {
      g.resolved_kind = GridKind::kOther;
      g.resolved = MakeExpr(expr);
      GridNames(expr, g, "");
      return;
    }
  }
  g.resolved_kind = ClassifyGrid(resolved);
  g.resolved = MakeExpr(resolved);
  Node body = resolved;
  if (g.resolved_kind == GridKind::kLambda) {
    auto ps = ReadParams(resolved.field("parameters"));
    if (!ps.empty()) g.meta_param = ps[0].name;
    body = Unparen(resolved.field("body"));
  }
  if (body.type() == "tuple" || body.type() == "list" || body.type() == "expression_list") {
    for (const Node& c : body.named_children()) g.dims.push_back(MakeExpr(c));
  } else {
    g.dims.push_back(MakeExpr(body));
  }
  GridNames(body, g, g.meta_param);
}

GridKind Analyzer::ClassifyGrid(const Node& n) {
  auto t = n.type();
  if (t == "tuple" || t == "list" || t == "expression_list") return GridKind::kTuple;
  if (t == "lambda") return GridKind::kLambda;
  if (t == "identifier") return GridKind::kVariable;
  if (t == "call") return GridKind::kCall;
  return GridKind::kOther;
}

void Analyzer::GridNames(const Node& n, Grid& g, const std::string& meta) {
  auto add = [](std::vector<std::string>& v, std::string s) {
    if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
  };
  n.Walk([&](const Node& c) {
    if (c.type() == "subscript") {
      Node v = c.field("value");
      Node key = c.field("subscript");
      if (v.type() == "identifier" && !meta.empty() && v.text() == meta && key.type() == "string") {
        add(g.meta_keys, pyast::StringLiteralValue(key));
        return false;
      }
    }
    if (c.type() == "call") {
      // meta.get("X")
      Node f = c.field("function");
      if (f.type() == "attribute" && f.field("object").text() == meta && !meta.empty() &&
          f.field("attribute").text() == "get") {
        Node key = c.field("arguments").named_child(0);
        if (key.type() == "string") add(g.meta_keys, pyast::StringLiteralValue(key));
        return false;
      }
    }
    if (c.type() == "attribute") {
      // Only the root object of a.b.c counts.
      Node root = c;
      while (root.type() == "attribute") root = root.field("object");
      if (root.type() == "identifier") {
        std::string name(root.text());
        if (name != meta && !IsModuleName(name) && !kBuiltins.count(name)) add(g.names, name);
        return false;
      }
      return true;
    }
    if (c.type() == "identifier") {
      std::string name(c.text());
      Node p = c.parent();
      if (p.type() == "keyword_argument" && p.field("name") == c) return false;
      if (p.type() == "call" && p.field("function") == c) return false;  // a callee, not a value
      if (name != meta && !IsModuleName(name) && !kBuiltins.count(name)) add(g.names, name);
    }
    if (c.type() == "lambda_parameters" || c.type() == "parameters") return false;
    return true;
  });
}

void Analyzer::GridConstexprs(const Kernel& k, Launch& l) {
  Grid& g = l.grid;
  auto add = [&](const std::string& s) {
    if (std::find(g.constexprs.begin(), g.constexprs.end(), s) == g.constexprs.end()) g.constexprs.push_back(s);
  };
  for (const auto& key : g.meta_keys) {
    const Param* p = k.FindParam(key);
    if ((p && p->kind == ParamKind::kConstexpr) || kLaunchOptions.count(key)) add(key);
  }
  for (const auto& b : l.bindings) {
    if (b.arg < 0) continue;
    std::string v = l.args[b.arg].value.text;
    std::string var = b.origin.variable;
    for (const auto& n : g.names) {
      if (n == v || n == var) add(b.name);
    }
  }
}

}  // namespace kiln::analysis::internal
