// kiln/analysis: jit functions, their decorators (jit, autotune configs, heuristics) and parameters (Analyzer, see
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

void Analyzer::FindJitFunctions() {
  tree_.root().Walk([&](const Node& n) {
    if (n.type() != "decorated_definition") return true;
    Node def = n.field("definition");
    if (def.is_null() || def.type() != "function_definition") return true;
    bool is_jit = false;
    for (const Node& d : n.named_children()) {
      if (d.type() != "decorator") continue;
      Node e = d.named_child(0);
      std::string c = Canon(Dotted(e.type() == "call" ? e.field("function") : e));
      if (c == "triton.jit" || c == "tl.jit" || c == "triton.jit.jit") is_jit = true;
    }
    if (!is_jit) return true;
    Kernel k;
    k.name = std::string(def.field("name").text());
    k.span = n.span();
    k.def_span = def.span();
    k.name_span = def.field("name").span();
    k.body_span = def.field("body").span();
    ReadDecorators(n, k);
    ReadKernelParams(def, k);
    KernelWork w;
    w.def = def;
    w.outer = n;
    jit_index_[k.name] = model_.kernels.size();
    model_.kernels.push_back(std::move(k));
    work_.push_back(std::move(w));
    return true;  // nested jit functions inside are unusual but allowed
  });
}

void Analyzer::ReadDecorators(const Node& decorated, Kernel& k) {
  bool first = true;
  for (const Node& d : decorated.named_children()) {
    if (d.type() != "decorator") continue;
    Node e = d.named_child(0);
    if (first) {
      k.first_decorator_span = d.span();
      first = false;
    }
    bool is_call = e.type() == "call";
    std::string c = Canon(Dotted(is_call ? e.field("function") : e));
    if (c == "triton.jit" || c == "tl.jit") {
      JitDecorator j;
      j.span = e.span();
      j.form = std::string(is_call ? e.field("function").text() : e.text());
      if (is_call) {
        j.form += "(...)";
        CallArgs a = ReadArgs(e.field("arguments"));
        j.kwargs = KwArgs(a);
        pending_dns_ = StringList(a.keyword("do_not_specialize"));
      }
      k.jit = std::move(j);
    } else if (c == "triton.autotune" && is_call) {
      k.autotune = ReadAutotune(e);
    } else if (c == "triton.heuristics" && is_call) {
      if (!k.heuristics) {
        k.heuristics = Heuristics();
        k.heuristics->span = e.span();
      }
      CallArgs a = ReadArgs(e.field("arguments"));
      Node v = Unparen(a.get(0, "values"));
      if (!k.heuristics->values_expr.present()) k.heuristics->values_expr = MakeExpr(v);
      if (!v.is_null() && v.type() == "dictionary") {
        for (const Node& pair : v.named_children()) {
          if (pair.type() != "pair") continue;
          HeuristicsEntry h;
          h.name = pyast::StringLiteralValue(pair.field("key"));
          h.value = MakeExpr(pair.field("value"));
          h.span = pair.span();
          k.heuristics->entries.push_back(std::move(h));
        }
      }
    } else {
      k.other_decorators.push_back({e.span(), std::string(e.text())});
    }
  }
}

Node Analyzer::ModuleValue(const std::string& name) const {
  Node found;
  for (const Node& st : tree_.root().named_children()) {
    if (st.type() != "expression_statement") continue;
    Node a = st.named_child(0);
    if (a.type() == "assignment" && a.field("left").text() == name) found = a.field("right");
  }
  return found;
}

Node Analyzer::ModuleFunction(const std::string& name) const {
  Node found;
  tree_.root().Walk([&](const Node& n) {
    if (n.type() == "function_definition" && n.field("name").text() == name) {
      found = n;
      return false;
    }
    return found.is_null();
  });
  return found;
}

void Analyzer::ReadConfigsFrom(const Node& raw, Autotune& at, int depth) {
  Node n = Unparen(raw);
  if (n.is_null() || depth > 4) return;
  auto t = n.type();
  if (t == "list" || t == "tuple") {
    bool all = true;
    for (const Node& c : n.named_children()) {
      if (c.type() == "call" && IsConfigCall(c)) {
        at.configs.push_back(ReadConfig(c));
      } else if (c.type() == "list_splat") {
        ReadConfigsFrom(c.named_child(0), at, depth + 1);
        all = false;
      } else if (c.type() != "comment") {
        all = false;
      }
    }
    if (all)
      at.configs_resolved = true;
    else
      at.configs_generated = true;
    return;
  }
  if (t == "binary_operator") {
    ReadConfigsFrom(n.field("left"), at, depth + 1);
    ReadConfigsFrom(n.field("right"), at, depth + 1);
    return;
  }
  if (t == "identifier") {
    Node v = ModuleValue(std::string(n.text()));
    if (!v.is_null()) {
      ReadConfigsFrom(v, at, depth + 1);
      return;
    }
  }
  if (t == "call" && n.field("arguments").named_child_count() == 0) {
    // get_configs(): a module function that returns a literal list.
    Node fn = ModuleFunction(Dotted(n.field("function")));
    Node ret;
    if (!fn.is_null()) {
      int returns = 0;
      fn.field("body").Walk([&](const Node& c) {
        if (c.type() == "function_definition" || c.type() == "lambda") return false;
        if (c.type() == "return_statement") {
          ++returns;
          ret = c.named_child(0);
        }
        return true;
      });
      if (returns != 1) ret = Node();
    }
    Node r = Unparen(ret);
    if (!r.is_null() && (r.type() == "list" || r.type() == "tuple")) {
      ReadConfigsFrom(r, at, depth + 1);
      return;
    }
  }
  if (t == "list_comprehension" && ExpandConfigComprehension(n, at)) return;
  // A comprehension, a call to a config generator, or something else: collect the
  // triton.Config calls it (or the function it calls) contains, for the tuned names.
  at.configs_generated = true;
  at.configs_resolved = false;
  // Every module-level name the expression mentions may hold or build configs:
  // list(filter(keep, configs)), get_configs(...), [triton.Config(...) for ...].
  std::vector<Node> scopes{n};
  n.Walk([&](const Node& c) {
    if (c.type() != "identifier") return true;
    std::string name(c.text());
    Node v = ModuleValue(name);
    if (!v.is_null()) scopes.push_back(v);
    Node fn = ModuleFunction(name);
    if (!fn.is_null()) scopes.push_back(fn);
    return true;
  });
  for (const Node& s : scopes) {
    s.Walk([&](const Node& c) {
      if (c.type() == "call" && IsConfigCall(c)) {
        AutotuneConfig cfg = ReadConfig(c);
        for (const auto& kw : cfg.kwargs) AddTuned(at, kw.name);
        AddOptions(at, cfg);
        // Dict keys built by assignment (cfg["BLOCK"] = ...) are caught below.
        return false;
      }
      if (c.type() == "subscript" && c.parent().type() == "assignment") {
        Node key = c.field("subscript");
        if (key.type() == "string") AddTuned(at, pyast::StringLiteralValue(key));
      }
      return true;
    });
  }
}

bool Analyzer::ExpandConfigComprehension(const Node& comp, Autotune& at) {
  constexpr size_t kMaxConfigs = 4096;
  Node body = Unparen(comp.field("body"));
  if (body.is_null() || body.type() != "call" || !IsConfigCall(body)) return false;
  // The loop variables in clause order (the first is the outermost), each over its literal values.
  std::vector<std::pair<std::string, std::vector<std::string>>> loops;
  for (const Node& c : comp.named_children()) {
    if (c == body || c.type() == "comment") continue;
    if (c.type() != "for_in_clause") return false;  // an if clause: which configs remain is not read here
    Node var = c.field("left"), over = Unparen(c.field("right"));
    if (var.is_null() || var.type() != "identifier" || over.is_null()) return false;
    std::vector<std::string> values;
    if (over.type() == "list" || over.type() == "tuple") {
      for (const Node& v : over.named_children()) {
        if (v.type() == "comment") continue;
        if (!pyast::ParseIntLiteral(v.text())) return false;
        values.emplace_back(v.text());
      }
    } else if (over.type() == "call" && Dotted(over.field("function")) == "range") {
      std::vector<int64_t> a;
      for (const Node& v : over.field("arguments").named_children()) {
        auto x = pyast::ParseIntLiteral(v.text());
        if (!x) return false;
        a.push_back(*x);
      }
      if (a.empty() || a.size() > 3) return false;
      const int64_t lo = a.size() > 1 ? a[0] : 0, hi = a.size() > 1 ? a[1] : a[0], step = a.size() > 2 ? a[2] : 1;
      if (step == 0) return false;
      for (int64_t x = lo; step > 0 ? x < hi : x > hi; x += step) {
        values.push_back(std::to_string(x));
        if (values.size() > kMaxConfigs) return false;
      }
    } else {
      return false;
    }
    loops.emplace_back(std::string(var.text()), std::move(values));
  }
  if (loops.empty()) return false;
  const AutotuneConfig shape = ReadConfig(body);
  Node dict = Unparen(ReadArgs(body.field("arguments")).get(0, "kwargs"));
  if (shape.has_pre_hook || (!dict.is_null() && dict.type() != "dictionary")) return false;
  std::map<std::string, size_t> loop_of;
  for (size_t i = 0; i < loops.size(); ++i) loop_of[loops[i].first] = i;
  // Every value is a literal or a loop variable (anything else would need evaluating Python).
  auto known = [&](const KwArg& k) { return pyast::ParseIntLiteral(k.value.text) || loop_of.count(k.value.text); };
  for (const auto& kw : shape.kwargs)
    if (!known(kw)) return false;
  for (const auto* o : {&shape.num_warps, &shape.num_stages, &shape.num_ctas, &shape.maxnreg})
    if (*o && !known(**o)) return false;
  size_t total = 1;
  for (const auto& l : loops) {
    if (l.second.empty()) return false;
    total *= l.second.size();
    if (total > kMaxConfigs) return false;
  }
  std::vector<AutotuneConfig> out;
  std::vector<size_t> idx(loops.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    auto bind = [&](KwArg& k) {
      auto it = loop_of.find(k.value.text);
      if (it != loop_of.end()) k.value.text = loops[it->second].second[idx[it->second]];
    };
    AutotuneConfig c = shape;
    for (auto& kw : c.kwargs) bind(kw);
    for (auto* o : {&c.num_warps, &c.num_stages, &c.num_ctas, &c.maxnreg})
      if (*o) bind(**o);
    out.push_back(std::move(c));
    for (size_t i = loops.size(); i-- > 0;) {  // the innermost clause varies fastest
      if (++idx[i] < loops[i].second.size()) break;
      idx[i] = 0;
    }
  }
  at.configs = std::move(out);
  at.configs_resolved = true;
  at.configs_generated = false;
  at.configs_expanded = true;
  for (const auto& c : at.configs) {
    for (const auto& kw : c.kwargs) AddTuned(at, kw.name);
    AddOptions(at, c);
  }
  return true;
}

void Analyzer::AddOptions(Autotune& at, const AutotuneConfig& c) {
  auto add = [&](const char* n) {
    if (std::find(at.tuned_options.begin(), at.tuned_options.end(), n) == at.tuned_options.end()) {
      at.tuned_options.push_back(n);
    }
  };
  if (c.num_warps) add("num_warps");
  if (c.num_stages) add("num_stages");
  if (c.num_ctas) add("num_ctas");
  if (c.maxnreg) add("maxnreg");
}

void Analyzer::AddTuned(Autotune& at, const std::string& name) {
  if (name.empty()) return;
  if (std::find(at.tuned_names.begin(), at.tuned_names.end(), name) == at.tuned_names.end()) {
    at.tuned_names.push_back(name);
  }
}

bool Analyzer::IsConfigCall(const Node& call) const {
  std::string c = CanonCallee(call);
  return c == "triton.Config" || EndsWith(c, ".Config") || c == "Config";
}

AutotuneConfig Analyzer::ReadConfig(const Node& call) {
  AutotuneConfig cfg;
  cfg.span = call.span();
  cfg.args_span = call.field("arguments").span();
  CallArgs a = ReadArgs(call.field("arguments"));
  Node d = Unparen(a.get(0, "kwargs"));
  if (!d.is_null() && d.type() == "dictionary") {
    cfg.kwargs_span = d.span();
    for (const Node& pair : d.named_children()) {
      if (pair.type() != "pair") continue;
      cfg.kwargs.push_back({pyast::StringLiteralValue(pair.field("key")), MakeExpr(pair.field("value")), pair.span()});
    }
  }
  static const char* kOpts[] = {"num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook"};
  for (size_t i = 0; i < 5; ++i) {
    Node v;
    Span whole;
    if (i + 1 < a.positional.size()) {
      v = a.positional[i + 1];
      whole = v.span();
    } else if (Node kw = a.keyword_arg(kOpts[i]); !kw.is_null()) {
      v = kw.field("value");
      whole = kw.span();
    }
    if (v.is_null()) continue;
    KwArg k{kOpts[i], MakeExpr(v), whole};
    switch (i) {
      case 0: cfg.num_warps = k; break;
      case 1: cfg.num_stages = k; break;
      case 2: cfg.num_ctas = k; break;
      case 3: cfg.maxnreg = k; break;
      case 4: cfg.has_pre_hook = v.type() != "none"; break;
    }
  }
  return cfg;
}

Autotune Analyzer::ReadAutotune(const Node& call) {
  Autotune at;
  at.span = call.span();
  at.args_span = call.field("arguments").span();
  CallArgs a = ReadArgs(call.field("arguments"));
  at.kwargs = KwArgs(a);
  Node configs = a.get(0, "configs");
  at.configs_expr = MakeExpr(configs);
  ReadConfigsFrom(configs, at, 0);
  for (const auto& c : at.configs) {
    for (const auto& kw : c.kwargs) AddTuned(at, kw.name);
    AddOptions(at, c);
  }
  Node key = a.get(1, "key");
  at.key_expr = MakeExpr(key);
  at.key = StringList(key);
  at.prune_configs_by = MakeExpr(a.keyword("prune_configs_by"));
  at.reset_to_zero = MakeExpr(a.keyword("reset_to_zero"));
  at.restore_value = MakeExpr(a.keyword("restore_value"));
  at.pre_hook = MakeExpr(a.keyword("pre_hook"));
  at.post_hook = MakeExpr(a.keyword("post_hook"));
  at.warmup = MakeExpr(a.keyword("warmup"));
  at.rep = MakeExpr(a.keyword("rep"));
  return at;
}

void Analyzer::ReadKernelParams(const Node& def, Kernel& k) {
  auto fps = ReadParams(def.field("parameters"));
  int idx = 0;
  for (const auto& fp : fps) {
    Param p;
    p.name = fp.name;
    p.index = idx++;
    p.span = fp.node.span();
    p.annotation = MakeExpr(fp.annotation);
    p.default_value = MakeExpr(fp.default_value);
    std::string ann(fp.annotation.is_null() ? "" : fp.annotation.text());
    if (ann.find("constexpr") != std::string::npos) {
      p.kind = ParamKind::kConstexpr;
      p.evidence = ParamEvidence::kAnnotation;
      p.evidence_detail = "annotated " + ann;
    } else if (ann.find("pointer") != std::string::npos) {
      p.kind = ParamKind::kPointer;
      p.evidence = ParamEvidence::kAnnotation;
      p.evidence_detail = "annotated " + ann;
    } else if (ann.find("TensorDescriptor") != std::string::npos ||
               ann.find("tensor_descriptor") != std::string::npos) {
      p.kind = ParamKind::kDescriptor;
      p.evidence = ParamEvidence::kAnnotation;
      p.evidence_detail = "annotated " + ann;
    }
    k.params.push_back(std::move(p));
  }
  for (const auto& d : pending_dns_) {
    std::string name = d;
    if (auto i = pyast::ParseIntLiteral(d); i && std::all_of(d.begin(), d.end(), ::isdigit))  // a position
      name = *i >= 0 && *i < static_cast<int64_t>(k.params.size()) ? k.params[*i].name : d;
    if (k.jit) k.jit->do_not_specialize.push_back(name);
    for (auto& p : k.params) {
      if (p.name == name) p.do_not_specialize = true;
    }
  }
  pending_dns_.clear();
}

}  // namespace kiln::analysis::internal
