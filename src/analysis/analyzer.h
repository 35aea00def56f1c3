// kiln/analysis: the Analyzer behind AnalyzeModule and the syntax readers it shares (internal).
//
// One Analyzer per module; its members are defined by concern: analyze.cc (driver, imports, names),
// decorators.cc, kernel_body.cc, origins.cc, launches.cc, classify.cc. The free readers (call
// arguments, literal lists, assignments, parameters) are in readers.cc.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/model.h"
#include "pyast/pyast.h"
#include "pyast/syntax.h"

namespace kiln::analysis::internal {

using pyast::Dotted;
using pyast::Node;
using pyast::Unparen;

Expr MakeExpr(const Node& n);

bool StartsWith(std::string_view s, std::string_view p);
bool EndsWith(std::string_view s, std::string_view p);

std::vector<std::string> SplitDots(std::string_view s);

bool IsLiteralNode(const Node& raw, std::string_view canon_attr = "");

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

CallArgs ReadArgs(const Node& arglist);

std::vector<KwArg> KwArgs(const CallArgs& a);

// Strings of a list/tuple literal of strings.
std::vector<std::string> StringList(const Node& raw);

// An assignment seen in a scope (function body or module).
struct Assign {
  std::string name;
  Node stmt;   // the assignment / augmented_assignment node (or for_statement)
  Node value;  // the right-hand side (element for tuple unpacking); null for loop targets
  enum class Kind { kPlain, kAugmented, kLoopTarget, kOther } kind = Kind::kPlain;
  uint32_t pos = 0;  // byte offset of the statement
};

void CollectTargets(const Node& left, const Node& right, const Node& stmt, Assign::Kind kind, std::vector<Assign>& out);

// Assignments in a block, not descending into nested function or class definitions (their own
// scopes) nor lambdas.
void CollectAssigns(const Node& root, std::vector<Assign>& out);

struct FuncParam {
  std::string name;
  Node node;
  Node annotation;
  Node default_value;
  bool splat = false;
};

std::vector<FuncParam> ReadParams(const Node& params);

inline const std::set<std::string_view> kReductionOps = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"};
inline const std::set<std::string_view> kScanOps = {"cumsum", "cumprod", "associative_scan"};
inline const std::set<std::string_view> kAtomicOps = {"atomic_add",  "atomic_max", "atomic_min", "atomic_cas",
                                                      "atomic_xchg", "atomic_and", "atomic_or",  "atomic_xor"};
inline const std::set<std::string_view> kModuleNames = {"tl", "triton", "torch", "math", "np", "numpy", "libdevice"};
inline const std::set<std::string_view> kLaunchOptions = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
inline const std::set<std::string_view> kBuiltins = {
    "min",       "max",  "len",        "int",  "float",           "abs",  "round", "range",  "print",
    "tuple",     "list", "sum",        "pow",  "divmod",          "bool", "str",   "sorted", "reversed",
    "enumerate", "zip",  "isinstance", "cdiv", "next_power_of_2", "None", "True",  "False",  "self"};

// Per-kernel working state that is not part of the public model.
struct KernelWork {
  Node def;    // function_definition
  Node outer;  // decorated_definition or def
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

  Result<ModuleModel> Run();

 private:
  // ---- names ---------------------------------------------------------------------------------

  void ReadImports();

  static bool IsLibdeviceModule(const std::string& c);

  // Canonical form of a fully qualified dotted name.
  static std::string CanonFull(std::string s);

  // Canonical form of a dotted name as written in this module: "tl.load", "triton.jit",
  // "libdevice.tanh" (any path ending in a module called libdevice), "tl.math.exp".
  std::string Canon(const std::string& dotted) const;

  std::string CanonCallee(const Node& call) const;

  bool IsModuleName(std::string_view name) const;

  // ---- jit functions ------------------------------------------------------------------------

  void FindJitFunctions();

  void ReadDecorators(const Node& decorated, Kernel& k);

  // Resolves a name to its module-level assignment value (for configs = CONFIGS).
  Node ModuleValue(const std::string& name) const;

  Node ModuleFunction(const std::string& name) const;

  void ReadConfigsFrom(const Node& raw, Autotune& at, int depth);

  // A list comprehension of triton.Config over literal integer lists (or range() of literals), without
  // conditions: its configs, in Python's order. False (and `at` unchanged) for any other form.
  bool ExpandConfigComprehension(const Node& comp, Autotune& at);

  static void AddOptions(Autotune& at, const AutotuneConfig& c);

  static void AddTuned(Autotune& at, const std::string& name);

  bool IsConfigCall(const Node& call) const;

  AutotuneConfig ReadConfig(const Node& call);

  Autotune ReadAutotune(const Node& call);

  void ReadKernelParams(const Node& def, Kernel& k);

  // ---- kernel bodies ------------------------------------------------------------------------

  struct BodyCtx {
    Kernel* k;
    KernelWork* w;
    std::vector<int> loops;  // stack of indices into k->loops
  };

  static std::string AssignTarget(const Node& call);

  void AnalyzeBody(size_t ki);

  int Depth(const BodyCtx& ctx) const;
  int Innermost(const BodyCtx& ctx) const;

  void VisitBody(const Node& n, BodyCtx& ctx);

  void VisitCall(const Node& call, BodyCtx& ctx);

  void MarkDescriptor(Kernel& k, const std::string& name, const Node& call);

  bool IsBlockPtrExpr(const Node& raw, const KernelWork& w) const;

  // ---- pointer inference --------------------------------------------------------------------

  struct PointerUse {
    ptrdiff_t kernel;
    Node expr;
    std::string what;
  };

  // Parameters an address expression derives from: the left operand of + (pointer + offset), the
  // base of tl.make_block_ptr / tl.advance, through local assignments.
  void Bases(const Node& raw, const KernelWork& w, const Kernel& k, std::set<std::string>& out,
             std::set<std::string>& seen, int depth) const;

  void MarkPointer(Kernel& k, const std::string& name, const std::string& why);

  void InferPointers();

  // ---- launches -----------------------------------------------------------------------------

  struct Scope {
    Node def;  // function_definition (null: module)
    std::vector<Assign> assigns;
    std::vector<FuncParam> params;
  };

  const Scope& ScopeOf(const Node& def);

  struct Enclosing {
    std::vector<Node> defs;  // innermost first
    std::string qualname;
    bool in_lambda = false;
    std::vector<Node> lambdas;  // innermost first
  };

  Enclosing EnclosingOf(const Node& n) const;

  // Finds the assignments to `name` visible at `pos` in `scope`: the last one before pos, plus
  // whether there are others.
  static const Assign* LastBefore(const std::vector<Assign>& assigns, const std::string& name, uint32_t pos,
                                  bool any_pos, int* count);

  Origin FromAssign(const Assign& a, const std::vector<Assign>& all, const std::string& scope, int count,
                    const Enclosing& enc, uint32_t pos, int depth);

  Origin ResolveName(const std::string& name, const Enclosing& enc, uint32_t pos, int depth = 0);

  Origin ResolveValue(const Node& raw, const Enclosing& enc, uint32_t pos);

  // tl.float16, torch.float32, tl.int8: constants written as attributes.
  bool IsConstantAttr(const Node& n) const;

  // Resolves the launched callee to jit functions of this module.
  std::vector<std::string> ResolveKernelRef(const Node& ref, const Enclosing& enc, uint32_t pos, int depth = 0);

  // Every function scope in the module (computed once on demand).
  const std::vector<std::pair<uint32_t, const Scope*>>& AllScopes();

  void FindLaunches();

  // Number of values a *splat expands to when it is a literal tuple/list (or a conditional of
  // equally long ones); -1 when unknown.
  // The value of `name` in a **dict splat at the launch whose dict is a literal (directly or
  // through a local variable), or null.
  Node DictSplatValue(const std::string& name, const Launch& l, const Enclosing& enc, uint32_t pos);

  // A constexpr not visible at the launch but possibly inside a *args / **kwargs splat: the
  // splat's root name decides (a parameter of the enclosing function, or a run-time value).
  Origin SplatOrigin(const Launch& l, const Enclosing& enc, uint32_t pos);

  static int SplatSize(const Node& splat);

  void MapArgs(const Node& call, const Kernel& k, Launch& l);

  void Bind(const Kernel& k, Launch& l, const Enclosing& enc, uint32_t pos);

  void ReadGrid(const Node& sub, const Enclosing& enc, uint32_t pos, const Kernel& k, Launch& l);

  static GridKind ClassifyGrid(const Node& n);

  void GridNames(const Node& n, Grid& g, const std::string& meta);

  void GridConstexprs(const Kernel& k, Launch& l);

  // ---- classification -----------------------------------------------------------------------

  struct Features {
    std::vector<std::string> dots_loop, dots_flat, exps, maxes, sums, other_red, scans, sqrts, divs, atomics;
    size_t loads = 0, stores = 0, descs = 0;
  };

  void Gather(size_t ki, Features& f, std::set<size_t>& seen, const std::string& via);

  void Classify();

  bool HasMaxReduction(size_t ki);
  std::string MaxReductionEvidence(size_t ki);

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

}  // namespace kiln::analysis::internal
