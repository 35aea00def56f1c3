// kiln/analysis: AnalyzeModule, the static model of a Triton module (see model.h).
//
// Structure: Analyzer::Run() (1) reads imports to learn the module's names for triton, tl and
// libdevice, (2) finds every jit function and reads its decorators and parameters, (3) walks each
// kernel body for facts, (4) infers pointer parameters from usage (with one propagation step
// through calls to other jit functions), (5) finds launch sites and resolves the origin of every
// constexpr and launch option, (6) classifies kernels.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/model.h"

namespace kiln::analysis {

using pyast::Node;

const char* ParamKindName(ParamKind k) {
  switch (k) {
    case ParamKind::kPointer: return "pointer";
    case ParamKind::kScalar: return "scalar";
    case ParamKind::kConstexpr: return "constexpr";
    case ParamKind::kDescriptor: return "descriptor";
  }
  return "?";
}
const char* ParamEvidenceName(ParamEvidence e) {
  switch (e) {
    case ParamEvidence::kAnnotation: return "annotation";
    case ParamEvidence::kUsage: return "usage";
    case ParamEvidence::kNameSuffix: return "name_suffix";
    case ParamEvidence::kDefault: return "default";
  }
  return "?";
}
const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kSoftmax: return "softmax";
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kScan: return "scan";
    case KernelClass::kOther: return "other";
  }
  return "?";
}
const char* OriginKindName(OriginKind k) {
  switch (k) {
    case OriginKind::kLiteral: return "literal";
    case OriginKind::kVariable: return "variable";
    case OriginKind::kComputed: return "computed";
    case OriginKind::kFunctionParam: return "function_param";
    case OriginKind::kAutotune: return "autotune";
    case OriginKind::kHeuristics: return "heuristics";
    case OriginKind::kDefault: return "default";
    case OriginKind::kMissing: return "missing";
  }
  return "?";
}
const char* GridKindName(GridKind k) {
  switch (k) {
    case GridKind::kTuple: return "tuple";
    case GridKind::kLambda: return "lambda";
    case GridKind::kVariable: return "variable";
    case GridKind::kCall: return "call";
    case GridKind::kOther: return "other";
  }
  return "?";
}

namespace {

Expr MakeExpr(const Node& n) {
  if (n.is_null()) return {};
  return {std::string(n.text()), n.span()};
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::vector<std::string> SplitDots(std::string_view s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (true) {
    size_t e = s.find('.', b);
    out.emplace_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return out;
}

// "a.b.c" for identifier/attribute chains, "" otherwise.
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

// Strips parentheses.
Node Unparen(Node n) {
  while (!n.is_null() && n.type() == "parenthesized_expression" && n.named_child_count() == 1) {
    n = n.named_child(0);
  }
  return n;
}

bool IsLiteralNode(const Node& raw, std::string_view canon_attr = "") {
  Node n = Unparen(raw);
  if (n.is_null()) return false;
  auto t = n.type();
  if (t == "integer" || t == "float" || t == "true" || t == "false" || t == "none") return true;
  if (t == "string") {
    for (const Node& c : n.named_children()) {
      if (c.type() == "interpolation") return false;
    }
    return true;
  }
  if (t == "concatenated_string") return true;
  if (t == "unary_operator") return IsLiteralNode(n.field("argument"));
  if (t == "binary_operator") {
    return IsLiteralNode(n.field("left")) && IsLiteralNode(n.field("right"));
  }
  return false;
}

struct CallArgs {
  std::vector<Node> positional;
  std::vector<std::pair<std::string, Node>> keywords;  // name -> keyword_argument node
  std::vector<Node> splats;
  Node keyword(std::string_view name) const {
    for (const auto& [k, n] : keywords) {
      if (k == name) return n.field("value");
    }
    return {};
  }
  Node keyword_arg(std::string_view name) const {
    for (const auto& [k, n] : keywords) {
      if (k == name) return n;
    }
    return {};
  }
  // Positional i, else keyword `name`.
  Node get(size_t i, std::string_view name) const {
    if (i < positional.size()) return positional[i];
    return keyword(name);
  }
};

CallArgs ReadArgs(const Node& arglist) {
  CallArgs a;
  if (arglist.is_null()) return a;
  for (const Node& c : arglist.named_children()) {
    auto t = c.type();
    if (t == "keyword_argument") {
      a.keywords.emplace_back(std::string(c.field("name").text()), c);
    } else if (t == "list_splat" || t == "dictionary_splat") {
      a.splats.push_back(c);
    } else if (t == "comment") {
      continue;
    } else {
      a.positional.push_back(c);
    }
  }
  return a;
}

std::vector<KwArg> KwArgs(const CallArgs& a) {
  std::vector<KwArg> out;
  for (const auto& [k, n] : a.keywords) out.push_back({k, MakeExpr(n.field("value")), n.span()});
  return out;
}

// Strings of a list/tuple literal of strings.
std::vector<std::string> StringList(const Node& raw) {
  std::vector<std::string> out;
  Node n = Unparen(raw);
  if (n.is_null()) return out;
  if (n.type() == "string") {
    out.push_back(pyast::StringLiteralValue(n));
    return out;
  }
  if (n.type() != "list" && n.type() != "tuple") return out;
  for (const Node& c : n.named_children()) {
    if (c.type() == "string") out.push_back(pyast::StringLiteralValue(c));
    else if (c.type() == "integer") out.push_back(std::string(c.text()));
  }
  return out;
}

// An assignment seen in a scope (function body or module).
struct Assign {
  std::string name;
  Node stmt;   // the assignment / augmented_assignment node (or for_statement)
  Node value;  // the right-hand side (element for tuple unpacking); null for loop targets
  enum class Kind { kPlain, kAugmented, kLoopTarget, kOther } kind = Kind::kPlain;
  uint32_t pos = 0;  // byte offset of the statement
};

void CollectTargets(const Node& left, const Node& right, const Node& stmt, Assign::Kind kind,
                    std::vector<Assign>& out) {
  if (left.is_null()) return;
  auto t = left.type();
  if (t == "identifier") {
    out.push_back({std::string(left.text()), stmt, right, kind, stmt.span().begin.byte});
    return;
  }
  if (t == "pattern_list" || t == "tuple_pattern" || t == "list_pattern") {
    auto lhs = left.named_children();
    Node r = Unparen(right);
    std::vector<Node> rhs;
    if (!r.is_null() && (r.type() == "expression_list" || r.type() == "tuple")) rhs = r.named_children();
    for (size_t i = 0; i < lhs.size(); ++i) {
      // Pairwise when the right side is a tuple of the same length; otherwise every target gets
      // the whole right side, marked kOther (unpacked from a run-time value).
      bool pair = rhs.size() == lhs.size();
      Node v = pair ? rhs[i] : right;
      CollectTargets(lhs[i], v, stmt, !pair && kind == Assign::Kind::kPlain ? Assign::Kind::kOther : kind, out);
    }
    return;
  }
  if (t == "attribute") {
    // self.X = ... is recorded under its dotted text.
    out.push_back({std::string(left.text()), stmt, right, kind, stmt.span().begin.byte});
  }
}

// Assignments in a block, not descending into nested function or class definitions (their own
// scopes) nor lambdas.
void CollectAssigns(const Node& root, std::vector<Assign>& out) {
  root.Walk([&](const Node& n) {
    auto t = n.type();
    if (n != root && (t == "function_definition" || t == "class_definition" || t == "lambda")) return false;
    if (t == "assignment") {
      Node right = n.field("right");
      if (!right.is_null() && right.type() == "assignment") {
        // a = b = value: every target gets the final value.
        Node v = right;
        while (!v.is_null() && v.type() == "assignment") v = v.field("right");
        CollectTargets(n.field("left"), v, n, Assign::Kind::kPlain, out);
        return true;
      }
      CollectTargets(n.field("left"), right, n, Assign::Kind::kPlain, out);
      return true;
    }
    if (t == "augmented_assignment") {
      CollectTargets(n.field("left"), n.field("right"), n, Assign::Kind::kAugmented, out);
      return true;
    }
    if (t == "for_statement" || t == "for_in_clause") {
      CollectTargets(n.field("left"), Node(), n, Assign::Kind::kLoopTarget, out);
      return true;
    }
    if (t == "named_expression") {
      out.push_back({std::string(n.field("name").text()), n, n.field("value"), Assign::Kind::kPlain,
                     n.span().begin.byte});
      return true;
    }
    return true;
  });
}

struct FuncParam {
  std::string name;
  Node node;
  Node annotation;
  Node default_value;
  bool splat = false;
};

std::vector<FuncParam> ReadParams(const Node& params) {
  std::vector<FuncParam> out;
  for (const Node& p : params.named_children()) {
    auto t = p.type();
    FuncParam fp;
    fp.node = p;
    if (t == "identifier") {
      fp.name = std::string(p.text());
    } else if (t == "typed_parameter") {
      Node id = p.named_child(0);
      if (id.type() != "identifier") {
        fp.splat = true;
        fp.name = std::string(id.text());
      } else {
        fp.name = std::string(id.text());
      }
      fp.annotation = p.field("type");
    } else if (t == "default_parameter") {
      fp.name = std::string(p.field("name").text());
      fp.default_value = p.field("value");
    } else if (t == "typed_default_parameter") {
      fp.name = std::string(p.field("name").text());
      fp.annotation = p.field("type");
      fp.default_value = p.field("value");
    } else if (t == "list_splat_pattern" || t == "dictionary_splat_pattern") {
      fp.splat = true;
      fp.name = std::string(p.text());
    } else {
      continue;  // '/' or '*' separators
    }
    out.push_back(fp);
  }
  return out;
}

const std::set<std::string_view> kReductionOps = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"};
const std::set<std::string_view> kScanOps = {"cumsum", "cumprod", "associative_scan"};
const std::set<std::string_view> kAtomicOps = {"atomic_add", "atomic_max", "atomic_min", "atomic_cas",
                                               "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor"};
const std::set<std::string_view> kModuleNames = {"tl", "triton", "torch", "math", "np", "numpy", "libdevice"};
const std::set<std::string_view> kLaunchOptions = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
const std::set<std::string_view> kBuiltins = {
    "min", "max", "len", "int", "float", "abs", "round", "range", "print", "tuple", "list",
    "sum", "pow", "divmod", "bool", "str", "sorted", "reversed", "enumerate", "zip", "isinstance", "cdiv",
    "next_power_of_2", "None", "True", "False", "self"};

// Per-kernel working state that is not part of the public model.
struct KernelWork {
  Node def;      // function_definition
  Node outer;    // decorated_definition or def
  std::vector<Assign> assigns;
  std::unordered_map<std::string, std::vector<const Assign*>> by_name;
  struct CallSite {
    std::string callee;
    Node arglist;
  };
  std::vector<CallSite> jit_calls;
  // Feature counts for classification.
  std::vector<std::pair<std::string, Span>> exps, sqrts, divs, maxes;
  std::set<std::string> block_ptr_vars, desc_vars;
};

class Analyzer {
 public:
  explicit Analyzer(const pyast::Tree& tree) : tree_(tree) {}

  Result<ModuleModel> Run() {
    model_.path = tree_.path();
    ReadImports();
    FindJitFunctions();
    if (model_.kernels.empty()) {
      return InvalidArgument("no @triton.jit function found");
    }
    for (size_t i = 0; i < model_.kernels.size(); ++i) AnalyzeBody(i);
    InferPointers();
    CollectAssigns(tree_.root(), module_assigns_);
    FindLaunches();
    Classify();
    return std::move(model_);
  }

 private:
  // ---- names ---------------------------------------------------------------------------------

  void ReadImports() {
    tree_.root().Walk([&](const Node& n) {
      auto t = n.type();
      if (t == "import_statement") {
        for (const Node& c : n.named_children()) {
          if (c.type() == "dotted_name") {
            std::string full(c.text());
            std::string first = SplitDots(full)[0];
            alias_[first] = first;
          } else if (c.type() == "aliased_import") {
            alias_[std::string(c.field("alias").text())] = std::string(c.field("name").text());
          }
        }
        return false;
      }
      if (t == "import_from_statement") {
        std::string mod(n.field("module_name").text());
        for (uint32_t i = 0; i < n.child_count(); ++i) {
          if (n.field_name_of_child(i) != "name") continue;
          Node c = n.child(i);
          if (c.type() == "dotted_name") {
            std::string name(c.text());
            alias_[name] = mod + "." + name;
          } else if (c.type() == "aliased_import") {
            alias_[std::string(c.field("alias").text())] = mod + "." + std::string(c.field("name").text());
          }
        }
        return false;
      }
      return true;
    });
    if (!alias_.count("tl")) alias_["tl"] = "triton.language";
    if (!alias_.count("triton")) alias_["triton"] = "triton";
    for (const auto& [a, full] : alias_) {
      std::string c = CanonFull(full);
      if (c == "triton") model_.triton_aliases.push_back(a);
      else if (c == "tl") model_.tl_aliases.push_back(a);
      else if (IsLibdeviceModule(c)) model_.libdevice_aliases.push_back(a);
    }
  }

  static bool IsLibdeviceModule(const std::string& c) {
    auto parts = SplitDots(c);
    return !parts.empty() && parts.back() == "libdevice";
  }

  // Canonical form of a fully qualified dotted name.
  static std::string CanonFull(std::string s) {
    if (s == "triton.language" || StartsWith(s, "triton.language.")) s = "tl" + s.substr(15);
    if (StartsWith(s, "tl.core.")) s = "tl." + s.substr(8);
    if (StartsWith(s, "triton.runtime.jit.") || StartsWith(s, "triton.runtime.autotuner.")) {
      s = "triton." + s.substr(s.rfind('.') + 1);
    }
    return s;
  }

  // Canonical form of a dotted name as written in this module: "tl.load", "triton.jit",
  // "libdevice.tanh" (any path ending in a module called libdevice), "tl.math.exp".
  std::string Canon(const std::string& dotted) const {
    if (dotted.empty()) return "";
    size_t dot = dotted.find('.');
    std::string first = dotted.substr(0, dot);
    std::string rest = dot == std::string::npos ? "" : dotted.substr(dot);
    auto it = alias_.find(first);
    std::string full = (it == alias_.end() ? first : it->second) + rest;
    std::string c = CanonFull(full);
    auto parts = SplitDots(c);
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      if (parts[i] == "libdevice") {
        std::string out = "libdevice";
        for (size_t j = i + 1; j < parts.size(); ++j) out += "." + parts[j];
        return out;
      }
    }
    return c;
  }

  std::string CanonCallee(const Node& call) const { return Canon(Dotted(call.field("function"))); }

  bool IsModuleName(std::string_view name) const {
    if (kModuleNames.count(name)) return true;
    auto it = alias_.find(std::string(name));
    return it != alias_.end();
  }

  // ---- jit functions ------------------------------------------------------------------------

  void FindJitFunctions() {
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

  void ReadDecorators(const Node& decorated, Kernel& k) {
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

  // Resolves a name to its module-level assignment value (for configs = CONFIGS).
  Node ModuleValue(const std::string& name) const {
    Node found;
    for (const Node& st : tree_.root().named_children()) {
      if (st.type() != "expression_statement") continue;
      Node a = st.named_child(0);
      if (a.type() == "assignment" && a.field("left").text() == name) found = a.field("right");
    }
    return found;
  }

  Node ModuleFunction(const std::string& name) const {
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

  void ReadConfigsFrom(const Node& raw, Autotune& at, int depth) {
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
      if (all) at.configs_resolved = true;
      else at.configs_generated = true;
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

  static void AddOptions(Autotune& at, const AutotuneConfig& c) {
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

  static void AddTuned(Autotune& at, const std::string& name) {
    if (name.empty()) return;
    if (std::find(at.tuned_names.begin(), at.tuned_names.end(), name) == at.tuned_names.end()) {
      at.tuned_names.push_back(name);
    }
  }

  bool IsConfigCall(const Node& call) const {
    std::string c = CanonCallee(call);
    return c == "triton.Config" || EndsWith(c, ".Config") || c == "Config";
  }

  AutotuneConfig ReadConfig(const Node& call) {
    AutotuneConfig cfg;
    cfg.span = call.span();
    cfg.args_span = call.field("arguments").span();
    CallArgs a = ReadArgs(call.field("arguments"));
    Node d = Unparen(a.get(0, "kwargs"));
    if (!d.is_null() && d.type() == "dictionary") {
      cfg.kwargs_span = d.span();
      for (const Node& pair : d.named_children()) {
        if (pair.type() != "pair") continue;
        cfg.kwargs.push_back({pyast::StringLiteralValue(pair.field("key")), MakeExpr(pair.field("value")),
                              pair.span()});
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

  Autotune ReadAutotune(const Node& call) {
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

  void ReadKernelParams(const Node& def, Kernel& k) {
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
      } else if (ann.find("TensorDescriptor") != std::string::npos || ann.find("tensor_descriptor") != std::string::npos) {
        p.kind = ParamKind::kDescriptor;
        p.evidence = ParamEvidence::kAnnotation;
        p.evidence_detail = "annotated " + ann;
      }
      k.params.push_back(std::move(p));
    }
    for (const auto& d : pending_dns_) {
      bool numeric = !d.empty() && std::all_of(d.begin(), d.end(), ::isdigit);
      std::string name = d;
      if (numeric) {
        size_t i = std::stoul(d);
        name = i < k.params.size() ? k.params[i].name : d;
      }
      if (k.jit) k.jit->do_not_specialize.push_back(name);
      for (auto& p : k.params) {
        if (p.name == name) p.do_not_specialize = true;
      }
    }
    pending_dns_.clear();
  }

  // ---- kernel bodies ------------------------------------------------------------------------

  struct BodyCtx {
    Kernel* k;
    KernelWork* w;
    std::vector<int> loops;  // stack of indices into k->loops
  };

  static std::string AssignTarget(const Node& call) {
    Node p = call.parent();
    // Look through `.to(...)`, subscripts `[:, None]` and parentheses.
    Node cur = call;
    while (!p.is_null() && (p.type() == "parenthesized_expression" || p.type() == "subscript" ||
                            (p.type() == "attribute") || (p.type() == "call" && cur.type() == "attribute"))) {
      if (p.type() == "subscript" && p.field("value") != cur) return "";
      cur = p;
      p = p.parent();
    }
    if (!p.is_null() && p.type() == "assignment" && p.field("right") == cur) {
      Node l = p.field("left");
      if (l.type() == "identifier") return std::string(l.text());
    }
    return "";
  }

  void AnalyzeBody(size_t ki) {
    Kernel& k = model_.kernels[ki];
    KernelWork& w = work_[ki];
    Node body = w.def.field("body");
    CollectAssigns(body, w.assigns);
    for (const auto& a : w.assigns) w.by_name[a.name].push_back(&a);
    BodyCtx ctx{&k, &w, {}};
    VisitBody(body, ctx);
  }

  int Depth(const BodyCtx& ctx) const { return static_cast<int>(ctx.loops.size()); }
  int Innermost(const BodyCtx& ctx) const { return ctx.loops.empty() ? -1 : ctx.loops.back(); }

  void VisitBody(const Node& n, BodyCtx& ctx) {
    auto t = n.type();
    if (t == "for_statement" || t == "while_statement") {
      Loop l;
      l.span = n.span();
      l.depth = Depth(ctx) + 1;
      l.parent = Innermost(ctx);
      if (t == "while_statement") {
        l.kind = "while";
        Node cond = n.field("condition");
        l.iter_span = cond.span();
        l.end = MakeExpr(cond);
      } else {
        l.target = std::string(n.field("left").text());
        Node right = n.field("right");
        l.iter_span = right.span();
        l.kind = "iter";
        if (right.type() == "call") {
          std::string c = CanonCallee(right);
          if (c == "range") l.kind = "range";
          else if (c == "tl.range") l.kind = "tl.range";
          else if (c == "tl.static_range") l.kind = "tl.static_range";
          if (l.kind != "iter") {
            Node al = right.field("arguments");
            l.args_span = al.span();
            CallArgs a = ReadArgs(al);
            if (a.positional.size() == 1) {
              l.end = MakeExpr(a.positional[0]);
            } else if (a.positional.size() >= 2) {
              l.start = MakeExpr(a.positional[0]);
              l.end = MakeExpr(a.positional[1]);
              if (a.positional.size() >= 3) l.step = MakeExpr(a.positional[2]);
            }
            for (const auto& [name, kw] : a.keywords) {
              if (name == "arg1" || name == "start") l.start = MakeExpr(kw.field("value"));
              else if (name == "arg2" || name == "end") l.end = MakeExpr(kw.field("value"));
              else if (name == "step") l.step = MakeExpr(kw.field("value"));
              else l.options.push_back({name, MakeExpr(kw.field("value")), kw.span()});
            }
          }
        }
      }
      int idx = static_cast<int>(ctx.k->loops.size());
      ctx.k->loops.push_back(std::move(l));
      // The iterable / condition belongs to the enclosing level.
      Node head = t == "while_statement" ? n.field("condition") : n.field("right");
      VisitBody(head, ctx);
      ctx.loops.push_back(idx);
      for (const Node& c : n.named_children()) {
        if (c == head) continue;
        VisitBody(c, ctx);
      }
      ctx.loops.pop_back();
      return;
    }
    if (t == "call") VisitCall(n, ctx);
    if (t == "binary_operator") {
      Node op = n.child(1);
      if (op.text() == "/") ctx.w->divs.emplace_back("/", n.span());
    }
    for (const Node& c : n.named_children()) VisitBody(c, ctx);
  }

  void VisitCall(const Node& call, BodyCtx& ctx) {
    Kernel& k = *ctx.k;
    Node fn = call.field("function");
    Node al = call.field("arguments");
    std::string dotted = Dotted(fn);
    std::string c = Canon(dotted);
    CallArgs a = ReadArgs(al);
    int depth = Depth(ctx), loop = Innermost(ctx);

    if (c == "tl.program_id") {
      ProgramId p;
      p.span = call.span();
      Node ax = a.get(0, "axis");
      p.axis_expr = MakeExpr(ax);
      if (!ax.is_null() && ax.type() == "integer") p.axis = std::stoi(std::string(ax.text()));
      p.target = AssignTarget(call);
      k.program_ids.push_back(std::move(p));
      return;
    }
    if (c == "tl.arange") {
      Arange r;
      r.span = call.span();
      r.start = MakeExpr(a.get(0, "start"));
      r.end = MakeExpr(a.get(1, "end"));
      r.target = AssignTarget(call);
      k.aranges.push_back(std::move(r));
      return;
    }
    if (c == "tl.load" || c == "tl.store") {
      MemOp m;
      m.kind = c == "tl.load" ? MemOp::Kind::kLoad : MemOp::Kind::kStore;
      m.span = call.span();
      m.args_span = al.span();
      Node ptr = a.get(0, "pointer");
      m.pointer = MakeExpr(ptr);
      size_t i = 1;
      if (m.kind == MemOp::Kind::kStore) m.value = MakeExpr(a.get(i++, "value"));
      m.mask = MakeExpr(a.get(i++, "mask"));
      if (m.kind == MemOp::Kind::kLoad) m.other = MakeExpr(a.get(i++, "other"));
      m.boundary_check = MakeExpr(a.get(i++, "boundary_check"));
      if (m.kind == MemOp::Kind::kLoad) m.padding_option = MakeExpr(a.get(i++, "padding_option"));
      m.cache_modifier = MakeExpr(a.get(i++, "cache_modifier"));
      m.eviction_policy = MakeExpr(a.get(i++, "eviction_policy"));
      m.volatile_ = MakeExpr(a.get(i++, "volatile"));
      m.kwargs = KwArgs(a);
      m.block_pointer = IsBlockPtrExpr(ptr, *ctx.w);
      m.loop_depth = depth;
      m.loop = loop;
      pointer_uses_.push_back({&k - model_.kernels.data(), ptr, c + " at line " + std::to_string(call.span().begin.line)});
      k.memops.push_back(std::move(m));
      return;
    }
    if (c == "tl.make_block_ptr" || c == "tl.advance" || c == "tl.make_tensor_descriptor" ||
        c == "tl._experimental_make_tensor_descriptor" || c == "tl._experimental_descriptor_load" ||
        c == "tl._experimental_descriptor_store" || c == "tl.load_tensor_descriptor" ||
        c == "tl.store_tensor_descriptor" || c == "tl.experimental_descriptor_load") {
      BlockPtr b;
      b.op = c.substr(3);
      b.span = call.span();
      Node base = a.get(0, "base");
      b.base = MakeExpr(base);
      b.kwargs = KwArgs(a);
      b.target = AssignTarget(call);
      b.loop = loop;
      if (!b.target.empty()) {
        if (b.op == "make_block_ptr" || b.op == "advance") ctx.w->block_ptr_vars.insert(b.target);
        else ctx.w->desc_vars.insert(b.target);
      }
      if (b.op == "make_block_ptr" || b.op == "make_tensor_descriptor" || b.op == "_experimental_make_tensor_descriptor") {
        pointer_uses_.push_back({&k - model_.kernels.data(), base, c + " at line " + std::to_string(call.span().begin.line)});
      }
      if (b.op == "_experimental_descriptor_load" || b.op == "_experimental_descriptor_store" ||
          b.op == "load_tensor_descriptor" || b.op == "store_tensor_descriptor") {
        MarkDescriptor(k, std::string(base.text()), call);
      }
      k.block_ptrs.push_back(std::move(b));
      return;
    }
    if (c == "tl.dot" || c == "tl.dot_scaled") {
      Dot d;
      d.form = c;
      d.span = call.span();
      d.args_span = al.span();
      d.a = MakeExpr(a.get(0, "input"));
      if (c == "tl.dot") {
        d.b = MakeExpr(a.get(1, "other"));
        d.acc = MakeExpr(a.get(2, "acc"));
        d.input_precision = MakeExpr(a.get(3, "input_precision"));
        d.allow_tf32 = MakeExpr(a.keyword("allow_tf32"));
        d.max_num_imprecise_acc = MakeExpr(a.get(4, "max_num_imprecise_acc"));
        d.out_dtype = MakeExpr(a.get(5, "out_dtype"));
      } else {
        d.a = MakeExpr(a.get(0, "lhs"));
        d.b = MakeExpr(a.get(3, "rhs"));
        d.acc = MakeExpr(a.keyword("acc"));
        d.out_dtype = MakeExpr(a.keyword("out_dtype"));
      }
      d.loop_depth = depth;
      d.loop = loop;
      k.dots.push_back(std::move(d));
      return;
    }
    // tl.sum(x, axis=...) or x.sum(axis=...)
    std::string op;
    std::string form;
    Node input;
    Node axis;
    if (StartsWith(c, "tl.")) {
      op = c.substr(3);
      form = "function";
      input = a.get(0, "input");
      axis = a.get(1, "axis");
    } else if (fn.type() == "attribute") {
      Node obj = fn.field("object");
      std::string head = SplitDots(Dotted(obj)).front();
      if (Dotted(obj).empty() || !IsModuleName(head)) {
        std::string attr(fn.field("attribute").text());
        if (kReductionOps.count(attr) || kScanOps.count(attr)) {
          op = attr;
          form = "method";
          input = obj;
          axis = a.get(0, "axis");
        } else if ((attr == "load" || attr == "store") && obj.type() == "identifier") {
          std::string name(obj.text());
          if (ctx.w->desc_vars.count(name) || k.FindParam(name)) {
            BlockPtr b;
            b.op = attr == "load" ? "descriptor_load" : "descriptor_store";
            b.span = call.span();
            b.base = MakeExpr(obj);
            b.kwargs = KwArgs(a);
            b.target = AssignTarget(call);
            b.loop = loop;
            MarkDescriptor(k, name, call);
            k.block_ptrs.push_back(std::move(b));
            return;
          }
        }
      }
    }
    if (!op.empty() && (kReductionOps.count(op) || kScanOps.count(op))) {
      Reduction r;
      r.op = op;
      r.form = form;
      r.span = call.span();
      r.input = MakeExpr(input);
      r.axis = MakeExpr(axis);
      r.loop_depth = depth;
      r.loop = loop;
      if (op == "max") ctx.w->maxes.emplace_back(op, call.span());
      if (kScanOps.count(op)) k.scans.push_back(std::move(r));
      else k.reductions.push_back(std::move(r));
      return;
    }
    if (StartsWith(c, "tl.atomic_") && kAtomicOps.count(c.substr(3))) {
      Atomic at;
      at.op = c.substr(10);
      at.span = call.span();
      Node ptr = a.get(0, "pointer");
      at.pointer = MakeExpr(ptr);
      if (at.op == "cas") {
        at.value = MakeExpr(a.get(2, "val"));
        at.sem = MakeExpr(a.get(3, "sem"));
        at.scope = MakeExpr(a.get(4, "scope"));
      } else {
        at.value = MakeExpr(a.get(1, "val"));
        at.mask = MakeExpr(a.get(2, "mask"));
        at.sem = MakeExpr(a.get(3, "sem"));
        at.scope = MakeExpr(a.get(4, "scope"));
      }
      at.loop_depth = depth;
      pointer_uses_.push_back({&k - model_.kernels.data(), ptr, c + " at line " + std::to_string(call.span().begin.line)});
      k.atomics.push_back(std::move(at));
      return;
    }
    if (StartsWith(c, "libdevice.") || StartsWith(c, "tl.math.") || StartsWith(c, "tl.extra.")) {
      LibdeviceCall l;
      l.name = c.substr(c.rfind('.') + 1);
      l.via = dotted.substr(0, dotted.rfind('.'));
      l.span = call.span();
      k.libdevice.push_back(l);
    }
    // Features for the classifier.
    std::string leaf = c.substr(c.rfind('.') + 1);
    if (leaf == "exp" || leaf == "exp2" || leaf == "fast_expf" || leaf == "expf" || leaf == "softmax") {
      ctx.w->exps.emplace_back(c, call.span());
    }
    if (leaf == "sqrt" || leaf == "rsqrt" || leaf == "sqrt_rn" || leaf == "fdiv" || leaf == "div_rn") {
      if (leaf == "fdiv" || leaf == "div_rn") ctx.w->divs.emplace_back(c, call.span());
      else ctx.w->sqrts.emplace_back(c, call.span());
    }
    if (c == "tl.maximum") ctx.w->maxes.emplace_back(c, call.span());
    if (fn.type() == "identifier" && jit_index_.count(dotted)) {
      k.calls.push_back({dotted, call.span(), depth});
      ctx.w->jit_calls.push_back({dotted, al});
    }
  }

  void MarkDescriptor(Kernel& k, const std::string& name, const Node& call) {
    for (auto& p : k.params) {
      if (p.name == name && p.kind != ParamKind::kConstexpr && p.evidence != ParamEvidence::kAnnotation) {
        p.kind = ParamKind::kDescriptor;
        p.evidence = ParamEvidence::kUsage;
        p.evidence_detail = "tensor descriptor: " + std::string(call.text().substr(0, 60)) + " at line " +
                            std::to_string(call.span().begin.line);
      }
    }
  }

  bool IsBlockPtrExpr(const Node& raw, const KernelWork& w) const {
    Node n = Unparen(raw);
    if (n.is_null()) return false;
    if (n.type() == "identifier") return w.block_ptr_vars.count(std::string(n.text())) > 0;
    if (n.type() == "call") {
      std::string c = CanonCallee(n);
      return c == "tl.make_block_ptr" || c == "tl.advance";
    }
    return false;
  }

  // ---- pointer inference --------------------------------------------------------------------

  struct PointerUse {
    ptrdiff_t kernel;
    Node expr;
    std::string what;
  };

  // Parameters an address expression derives from: the left operand of + (pointer + offset), the
  // base of tl.make_block_ptr / tl.advance, through local assignments.
  void Bases(const Node& raw, const KernelWork& w, const Kernel& k, std::set<std::string>& out,
             std::set<std::string>& seen, int depth) const {
    Node n = Unparen(raw);
    if (n.is_null() || depth > 12) return;
    auto t = n.type();
    if (t == "identifier") {
      std::string name(n.text());
      if (k.FindParam(name)) {
        out.insert(name);
        return;
      }
      if (!seen.insert(name).second) return;
      auto it = w.by_name.find(name);
      if (it == w.by_name.end()) return;
      for (const Assign* a : it->second) {
        if (a->kind == Assign::Kind::kPlain) Bases(a->value, w, k, out, seen, depth + 1);
      }
      return;
    }
    if (t == "binary_operator") {
      std::string_view op = n.child(1).text();
      if (op == "+") {
        std::set<std::string> left;
        Bases(n.field("left"), w, k, left, seen, depth + 1);
        if (!left.empty()) {
          out.insert(left.begin(), left.end());
          return;
        }
        Bases(n.field("right"), w, k, out, seen, depth + 1);
      } else if (op == "-") {
        Bases(n.field("left"), w, k, out, seen, depth + 1);
      }
      return;
    }
    if (t == "subscript") {
      Bases(n.field("value"), w, k, out, seen, depth + 1);
      return;
    }
    if (t == "conditional_expression") {
      auto cs = n.named_children();
      if (cs.size() == 3) {
        Bases(cs[0], w, k, out, seen, depth + 1);
        Bases(cs[2], w, k, out, seen, depth + 1);
      }
      return;
    }
    if (t == "call") {
      std::string c = CanonCallee(n);
      CallArgs a = ReadArgs(n.field("arguments"));
      if (c == "tl.make_block_ptr" || c == "tl.advance" || c == "tl.make_tensor_descriptor" ||
          c == "tl.multiple_of" || c == "tl.max_contiguous" || c == "tl.broadcast_to" ||
          c == "tl.max_constancy") {
        Bases(a.get(0, "base"), w, k, out, seen, depth + 1);
      } else if (c == "tl.where") {
        Bases(a.get(1, "x"), w, k, out, seen, depth + 1);
        Bases(a.get(2, "y"), w, k, out, seen, depth + 1);
      } else if (n.field("function").type() == "attribute") {
        std::string attr(n.field("function").field("attribute").text());
        if (attr == "to" || attr == "reshape" || attr == "broadcast_to" || attr == "expand_dims") {
          Bases(n.field("function").field("object"), w, k, out, seen, depth + 1);
        }
      }
    }
  }

  void MarkPointer(Kernel& k, const std::string& name, const std::string& why) {
    for (auto& p : k.params) {
      if (p.name != name) continue;
      if (p.kind == ParamKind::kConstexpr || p.evidence == ParamEvidence::kAnnotation) return;
      if (p.kind == ParamKind::kDescriptor) return;
      if (p.evidence == ParamEvidence::kUsage) return;
      p.kind = ParamKind::kPointer;
      p.evidence = ParamEvidence::kUsage;
      p.evidence_detail = why;
    }
  }

  void InferPointers() {
    for (const auto& u : pointer_uses_) {
      Kernel& k = model_.kernels[u.kernel];
      std::set<std::string> out, seen;
      Bases(u.expr, work_[u.kernel], k, out, seen, 0);
      for (const auto& name : out) {
        MarkPointer(k, name, "address of " + u.what);
      }
    }
    // Pointers passed to other jit functions (helpers), a few rounds for chains.
    for (int round = 0; round < 3; ++round) {
      for (size_t ki = 0; ki < model_.kernels.size(); ++ki) {
        Kernel& k = model_.kernels[ki];
        for (const auto& cs : work_[ki].jit_calls) {
          const Kernel& callee = model_.kernels[jit_index_.at(cs.callee)];
          CallArgs a = ReadArgs(cs.arglist);
          auto check = [&](const Param* p, const Node& arg) {
            if (p == nullptr || p->kind != ParamKind::kPointer || p->evidence != ParamEvidence::kUsage) return;
            std::set<std::string> out, seen;
            Bases(arg, work_[ki], k, out, seen, 0);
            for (const auto& name : out) {
              MarkPointer(k, name, "passed as pointer " + p->name + " to " + callee.name + " at line " +
                                       std::to_string(arg.span().begin.line));
            }
          };
          for (size_t i = 0; i < a.positional.size() && i < callee.params.size(); ++i) {
            check(&callee.params[i], a.positional[i]);
          }
          for (const auto& [name, kw] : a.keywords) check(callee.FindParam(name), kw.field("value"));
        }
      }
    }
    for (auto& k : model_.kernels) {
      for (auto& p : k.params) {
        if (p.kind != ParamKind::kScalar || p.evidence != ParamEvidence::kDefault) continue;
        std::string_view n = p.name;
        if (EndsWith(n, "_ptr") || EndsWith(n, "_ptrs") || EndsWith(n, "Ptr") || EndsWith(n, "_pointer") ||
            n == "ptr") {
          p.kind = ParamKind::kPointer;
          p.evidence = ParamEvidence::kNameSuffix;
          p.evidence_detail = "name ends in a pointer suffix; no pointer use seen";
        } else {
          p.evidence_detail = "not used as an address";
        }
      }
    }
  }

  // ---- launches -----------------------------------------------------------------------------

  struct Scope {
    Node def;  // function_definition (null: module)
    std::vector<Assign> assigns;
    std::vector<FuncParam> params;
  };

  const Scope& ScopeOf(const Node& def) {
    uint32_t key = def.span().begin.byte;
    auto it = scopes_.find(key);
    if (it != scopes_.end()) return it->second;
    Scope s;
    s.def = def;
    CollectAssigns(def.field("body"), s.assigns);
    s.params = ReadParams(def.field("parameters"));
    return scopes_.emplace(key, std::move(s)).first->second;
  }

  struct Enclosing {
    std::vector<Node> defs;  // innermost first
    std::string qualname;
    bool in_lambda = false;
    std::vector<Node> lambdas;  // innermost first
  };

  Enclosing EnclosingOf(const Node& n) const {
    Enclosing e;
    std::vector<std::string> parts;
    for (Node p = n.parent(); !p.is_null(); p = p.parent()) {
      auto t = p.type();
      if (t == "function_definition") {
        e.defs.push_back(p);
        parts.push_back(std::string(p.field("name").text()));
        if (parts.size() > 1 && parts[parts.size() - 2] != "<lambda>") {}
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
      if (p.type() == "function_definition") is_def.push_back(true);
      else if (p.type() == "class_definition") is_def.push_back(false);
    }
    std::reverse(is_def.begin(), is_def.end());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) q += is_def[i - 1] ? ".<locals>." : ".";
      q += parts[i];
    }
    e.qualname = q.empty() ? "<module>" : q;
    return e;
  }

  // Finds the assignments to `name` visible at `pos` in `scope`: the last one before pos, plus
  // whether there are others.
  static const Assign* LastBefore(const std::vector<Assign>& assigns, const std::string& name, uint32_t pos,
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

  Origin FromAssign(const Assign& a, const std::vector<Assign>& all, const std::string& scope, int count,
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

  Origin ResolveName(const std::string& name, const Enclosing& enc, uint32_t pos, int depth = 0) {
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

  Origin ResolveValue(const Node& raw, const Enclosing& enc, uint32_t pos) {
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

  // tl.float16, torch.float32, tl.int8: constants written as attributes.
  bool IsConstantAttr(const Node& n) const {
    if (n.type() != "attribute") return false;
    std::string c = Canon(Dotted(n));
    if (!(StartsWith(c, "tl.") || StartsWith(c, "torch."))) return false;
    std::string leaf = c.substr(c.rfind('.') + 1);
    static const std::set<std::string_view> kTypes = {
        "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "uint16",
        "uint32", "uint64", "float8e4nv", "float8e5", "float8e4b15", "float8_e4m3fn", "float8_e5m2", "half",
        "float", "bool", "int1", "float8e4b8", "float8e5b16"};
    return kTypes.count(leaf) > 0;
  }

  // Resolves the launched callee to jit functions of this module.
  std::vector<std::string> ResolveKernelRef(const Node& ref, const Enclosing& enc, uint32_t pos, int depth = 0) {
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

  // Every function scope in the module (computed once on demand).
  const std::vector<std::pair<uint32_t, const Scope*>>& AllScopes() {
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

  void FindLaunches() {
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
      Launch l;
      l.span = call.span();
      l.args_span = call.field("arguments").span();
      l.kernel = kernels[0];
      if (kernels.size() > 1) l.kernel_candidates = kernels;
      l.kernel_ref = MakeExpr(ref);
      l.enclosing_function = enc.qualname;
      l.enclosing_span = enc.defs.empty() ? tree_.root().span() : enc.defs[0].span();
      l.in_lambda = enc.in_lambda;
      Kernel& k = model_.kernels[jit_index_.at(l.kernel)];
      for (const auto& kn : kernels) model_.kernels[jit_index_.at(kn)].launched = true;
      MapArgs(call, k, l);
      ReadGrid(sub, enc, pos, k, l);
      Bind(k, l, enc, pos);
      GridConstexprs(k, l);
      model_.launches.push_back(std::move(l));
    }
  }

  // Number of values a *splat expands to when it is a literal tuple/list (or a conditional of
  // equally long ones); -1 when unknown.
  // The value of `name` in a **dict splat at the launch whose dict is a literal (directly or
  // through a local variable), or null.
  Node DictSplatValue(const std::string& name, const Launch& l, const Enclosing& enc, uint32_t pos) {
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

  // A constexpr not visible at the launch but possibly inside a *args / **kwargs splat: the
  // splat's root name decides (a parameter of the enclosing function, or a run-time value).
  Origin SplatOrigin(const Launch& l, const Enclosing& enc, uint32_t pos) {
    Origin o;
    o.kind = OriginKind::kMissing;
    for (size_t i = 0; i < l.args.size(); ++i) {
      Node c = arg_nodes_[i];
      if (c.type() != "dictionary_splat" && c.type() != "list_splat") continue;
      if (c.type() == "list_splat" && SplatSize(c) >= 0) continue;
      Node e = Unparen(c.named_child(0));
      Node root = e;
      while (true) {
        if (root.type() == "attribute") root = root.field("object");
        else if (root.type() == "call") root = root.field("function");
        else if (root.type() == "subscript") root = root.field("value");
        else break;
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

  static int SplatSize(const Node& splat) {
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

  void MapArgs(const Node& call, const Kernel& k, Launch& l) {
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
        if (k.FindParam(arg.keyword)) arg.param = arg.keyword;
        else if (!kLaunchOptions.count(arg.keyword)) l.unmapped.push_back(arg.keyword);
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

  void Bind(const Kernel& k, Launch& l, const Enclosing& enc, uint32_t pos) {
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

  void ReadGrid(const Node& sub, const Enclosing& enc, uint32_t pos, const Kernel& k, Launch& l) {
    std::vector<Node> subs;
    bool trailing_comma = false;
    for (uint32_t i = 0; i < sub.child_count(); ++i) {
      if (sub.field_name_of_child(i) == "subscript") subs.push_back(sub.child(i));
      if (sub.child(i).type() == "," && i + 2 == sub.child_count()) trailing_comma = true;
    }
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

  static GridKind ClassifyGrid(const Node& n) {
    auto t = n.type();
    if (t == "tuple" || t == "list" || t == "expression_list") return GridKind::kTuple;
    if (t == "lambda") return GridKind::kLambda;
    if (t == "identifier") return GridKind::kVariable;
    if (t == "call") return GridKind::kCall;
    return GridKind::kOther;
  }

  void GridNames(const Node& n, Grid& g, const std::string& meta) {
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

  void GridConstexprs(const Kernel& k, Launch& l) {
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

  // ---- classification -----------------------------------------------------------------------

  struct Features {
    std::vector<std::string> dots_loop, dots_flat, exps, maxes, sums, other_red, scans, sqrts, divs, atomics;
    size_t loads = 0, stores = 0, descs = 0;
  };

  void Gather(size_t ki, Features& f, std::set<size_t>& seen, const std::string& via) {
    if (!seen.insert(ki).second) return;
    const Kernel& k = model_.kernels[ki];
    const KernelWork& w = work_[ki];
    auto at = [&](const std::string& what, const Span& s) {
      return what + " at line " + std::to_string(s.begin.line) + via;
    };
    for (const auto& d : k.dots) {
      (d.loop >= 0 ? f.dots_loop : f.dots_flat).push_back(at(d.form, d.span));
    }
    for (const auto& e : w.exps) f.exps.push_back(at(e.first, e.second));
    for (const auto& e : w.maxes) f.maxes.push_back(at(e.first, e.second));
    for (const auto& r : k.reductions) {
      std::string what = (r.form == "method" ? "." : "tl.") + r.op;
      if (r.op == "sum") f.sums.push_back(at(what, r.span));
      else if (r.op != "max") f.other_red.push_back(at(what, r.span));
    }
    for (const auto& r : k.scans) f.scans.push_back(at((r.form == "method" ? "." : "tl.") + r.op, r.span));
    for (const auto& e : w.sqrts) f.sqrts.push_back(at(e.first, e.second));
    for (const auto& e : w.divs) f.divs.push_back(at(e.first, e.second));
    for (const auto& a : k.atomics) f.atomics.push_back(at("tl.atomic_" + a.op, a.span));
    for (const auto& m : k.memops) (m.kind == MemOp::Kind::kLoad ? f.loads : f.stores)++;
    for (const auto& b : k.block_ptrs) {
      if (b.op == "descriptor_load" || b.op == "_experimental_descriptor_load" || b.op == "load_tensor_descriptor") f.loads++;
      if (b.op == "descriptor_store" || b.op == "_experimental_descriptor_store" || b.op == "store_tensor_descriptor") f.stores++;
    }
    for (const auto& c : k.calls) {
      Gather(jit_index_.at(c.callee), f, seen, " (in " + c.callee + ")");
    }
  }

  void Classify() {
    std::set<std::string> called;
    for (const auto& k : model_.kernels) {
      for (const auto& c : k.calls) called.insert(c.callee);
    }
    for (size_t ki = 0; ki < model_.kernels.size(); ++ki) {
      Kernel& k = model_.kernels[ki];
      k.is_helper = !k.launched && called.count(k.name) > 0;
      Features f;
      std::set<size_t> seen;
      Gather(ki, f, seen, "");
      auto& ev = k.class_evidence;
      auto first = [](const std::vector<std::string>& v) { return v.empty() ? std::string() : v.front(); };
      bool has_max = !f.maxes.empty();
      size_t ndots = f.dots_loop.size() + f.dots_flat.size();
      if (ndots >= 2 && !f.exps.empty()) {
        k.cls = KernelClass::kAttention;
        std::vector<std::string> all = f.dots_loop;
        all.insert(all.end(), f.dots_flat.begin(), f.dots_flat.end());
        ev.push_back(all[0]);
        ev.push_back(all[1]);
        ev.push_back(f.exps[0]);
        if (has_max) ev.push_back("max (online softmax): " + f.maxes[0]);
        else ev.push_back("no max reduction: exp-weighted (linear/retention-style) attention");
      } else if (ndots >= 1) {
        k.cls = KernelClass::kGemm;
        if (!f.dots_loop.empty()) ev.push_back(f.dots_loop[0] + " inside a loop (reduction over K)");
        else ev.push_back(f.dots_flat[0] + " outside any loop (single K tile)");
      } else if (!f.scans.empty()) {
        k.cls = KernelClass::kScan;
        ev.push_back(f.scans[0]);
      } else if (has_max && !f.exps.empty() && !f.sums.empty()) {
        k.cls = KernelClass::kSoftmax;
        ev.push_back(f.maxes[0]);
        ev.push_back(f.exps[0]);
        ev.push_back(f.sums[0]);
        if (!f.divs.empty()) ev.push_back("division " + f.divs[0]);
      } else if (!f.sums.empty() || !f.other_red.empty() || std::any_of(k.reductions.begin(), k.reductions.end(),
                                                                           [](const Reduction& r) { return r.op == "max"; }) ||
                 HasMaxReduction(ki)) {
        k.cls = KernelClass::kReduction;
        if (!f.sums.empty()) ev.push_back(f.sums[0]);
        if (!f.other_red.empty()) ev.push_back(f.other_red[0]);
        if (ev.empty()) ev.push_back(MaxReductionEvidence(ki));
        if (!f.sqrts.empty()) ev.push_back("normalization: " + f.sqrts[0]);
      } else if (f.loads + f.stores > 0 && f.atomics.empty()) {
        k.cls = KernelClass::kElementwise;
        ev.push_back(std::to_string(f.loads) + " load(s), " + std::to_string(f.stores) +
                     " store(s), no dot, reduction or scan");
      } else {
        k.cls = KernelClass::kOther;
        if (!f.atomics.empty()) ev.push_back("atomics without reductions: " + first(f.atomics));
        else if (f.loads + f.stores == 0) ev.push_back("no memory operations (helper or compute-only function)");
      }
    }
  }

  bool HasMaxReduction(size_t ki) {
    std::set<size_t> seen;
    return !MaxReductionEvidence(ki).empty();
  }
  std::string MaxReductionEvidence(size_t ki) {
    std::vector<size_t> stack{ki};
    std::set<size_t> seen;
    while (!stack.empty()) {
      size_t i = stack.back();
      stack.pop_back();
      if (!seen.insert(i).second) continue;
      for (const auto& r : model_.kernels[i].reductions) {
        if (r.op == "max") return std::string(r.form == "method" ? "." : "tl.") + "max at line " + std::to_string(r.span.begin.line);
      }
      for (const auto& c : model_.kernels[i].calls) stack.push_back(jit_index_.at(c.callee));
    }
    return "";
  }

  const pyast::Tree& tree_;
  ModuleModel model_;
  std::vector<KernelWork> work_;
  std::unordered_map<std::string, size_t> jit_index_;
  std::map<std::string, std::string> alias_;  // local name -> fully qualified
  std::vector<std::string> pending_dns_;
  std::vector<PointerUse> pointer_uses_;
  std::vector<Assign> module_assigns_;
  std::vector<Node> arg_nodes_;
  bool post_inferred_ = false;  // value nodes of the current launch's arguments
  std::map<uint32_t, Scope> scopes_;
  std::vector<std::pair<uint32_t, const Scope*>> all_scopes_;
  bool all_scopes_done_ = false;
};

}  // namespace

Result<ModuleModel> AnalyzeModule(const pyast::Tree& tree) {
  Analyzer a(tree);
  return a.Run();
}

}  // namespace kiln::analysis
