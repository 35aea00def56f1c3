// kiln/analysis: the static model of a Triton module.
//
// AnalyzeModule() turns a parsed Python module (pyast::Tree) into a ModuleModel: every @triton.jit
// function with its parameters, decorators (jit, autotune, heuristics) and the facts found in its
// body (program ids, aranges, loads/stores, block pointers and tensor descriptors, dots,
// reductions, scans, atomics, loops, calls to other jit functions, libdevice calls), a kernel class
// with evidence, and every launch site `kernel[grid](...)` with its arguments mapped to the
// kernel's parameters and the ORIGIN of every constexpr and launch option.
//
// These are plain structs, meant to be read by later stages (diagnose, rewrite, search) and
// serialised by analysis/json.h (schema documented in docs/analyze.md, schema_version 1).
//
// Spans: every fact carries the span of its source text (pyast::Span: byte offsets into the
// module text plus 1-based line and byte column). Where a rewrite edits a value, the model exposes
// the span of exactly the text to change (an Expr's span, a keyword argument's value span) and the
// span of the enclosing construct to insert into (argument lists, decorator calls).
//
// Roadmap: facts are syntactic plus a small local data-flow (assignments in the enclosing function
// and at module level, no inter-procedural propagation beyond one level of enclosing-function
// parameters). Everything the analysis cannot determine is reported as such, never guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "pyast/pyast.h"

namespace kiln::analysis {

using pyast::Span;

inline constexpr int kSchemaVersion = 1;

// A source expression: its exact text and span. `present()` is false for an absent value.
struct Expr {
  std::string text;
  Span span;
  bool present() const { return !text.empty(); }
};

// A keyword argument `name=value` (or a dict entry `'name': value` in triton.Config).
struct KwArg {
  std::string name;
  Expr value;  // span of the value only: what a rewrite replaces to change it
  Span span;   // span of the whole `name=value` / `'name': value`
};

// Parameters -------------------------------------------------------------------------------------

enum class ParamKind {
  kPointer,
  kScalar,
  kConstexpr,
  kDescriptor
};  // descriptor: a TMA tensor
    // descriptor (x.load([...]))

// How a parameter's kind was decided.
enum class ParamEvidence {
  kAnnotation,  // `X: tl.constexpr` (or triton.language.constexpr / constexpr)
  kUsage,       // used as the base of a pointer expression (tl.load(x + ...), tl.store, atomics,
                // tl.make_block_ptr(base=...), x + offs passed to another jit function as pointer)
  kNameSuffix,  // name ends in _ptr / _ptrs / Ptr (no usage seen)
  kDefault,     // none of the above: a runtime scalar
};

struct Param {
  std::string name;
  int index = 0;
  Span span;  // the whole parameter (name, annotation and default)
  ParamKind kind = ParamKind::kScalar;
  ParamEvidence evidence = ParamEvidence::kDefault;
  std::string evidence_detail;  // e.g. "tl.load(x_ptr + offsets) at line 12"
  Expr annotation;              // absent when none
  Expr default_value;           // absent when none
  bool do_not_specialize = false;
};

// Decorators -------------------------------------------------------------------------------------

struct JitDecorator {
  Span span;                                   // the decorator expression (without '@')
  std::string form;                            // "triton.jit", "jit", "triton.jit(...)", ... (the callee text)
  std::vector<KwArg> kwargs;                   // e.g. do_not_specialize=[...], debug=True, noinline=True
  std::vector<std::string> do_not_specialize;  // parameter names (indices resolved to names)
};

struct AutotuneConfig {
  Span span;                  // the triton.Config(...) call
  Span kwargs_span;           // the dict literal of its first argument (absent when not a dict)
  std::vector<KwArg> kwargs;  // dict entries: constexpr name -> value
  // Config options: num_warps, num_stages, num_ctas, maxnreg (absent when not given; Triton's
  // defaults are 4, 3, 1 and none).
  std::optional<KwArg> num_warps, num_stages, num_ctas, maxnreg;
  bool has_pre_hook = false;
  Span args_span;  // the argument list `( ... )` of triton.Config, for inserting options
};

struct Autotune {
  Span span;                       // the decorator expression
  Span args_span;                  // its argument list
  Expr configs_expr;               // the `configs` argument as written
  bool configs_resolved = false;   // configs is (or resolves to) a literal list of triton.Config
                                   // (directly, through a module variable, or returned by a
                                   // module function: then the spans are in that function)
  bool configs_generated = false;  // a comprehension / function call produces the configs
  // A comprehension over literal lists (`[triton.Config({"BLOCK": b}, num_warps=w) for b in [64, 128]
  // for w in [4, 8]]`) expanded into `configs`: resolved, but their spans are the comprehension's body
  // (one text for all), so an edit replaces the whole `configs` argument.
  bool configs_expanded = false;
  std::vector<AutotuneConfig> configs;
  // Constexpr names the configs set (union over configs; also filled from comprehension bodies).
  std::vector<std::string> tuned_names;
  // Launch options (num_warps, num_stages, num_ctas, maxnreg) some config sets explicitly.
  std::vector<std::string> tuned_options;
  std::vector<std::string> key;  // key=[...] names
  Expr key_expr;
  Expr prune_configs_by;
  Expr restore_value;
  Expr reset_to_zero;
  Expr pre_hook, post_hook;
  Expr warmup, rep;
  std::vector<KwArg> kwargs;  // every keyword argument as written
};

struct HeuristicsEntry {
  std::string name;  // the constexpr it sets
  Expr value;        // usually a lambda: its text
  Span span;         // the whole dict entry
};

struct Heuristics {
  Span span;  // the decorator expression
  Expr values_expr;
  std::vector<HeuristicsEntry> entries;
};

struct OtherDecorator {
  Span span;
  std::string text;
};

// Body facts -------------------------------------------------------------------------------------

struct ProgramId {
  Span span;      // the call
  int axis = -1;  // -1 when not a literal
  Expr axis_expr;
  std::string target;  // the variable it is assigned to, when a simple assignment
};

struct Arange {
  Span span;
  Expr start, end;  // bound expressions
  std::string target;
};

struct MemOp {
  enum class Kind { kLoad, kStore };
  Kind kind = Kind::kLoad;
  Span span;       // the call
  Span args_span;  // the argument list, to insert keyword arguments before its ')'
  Expr pointer;    // first argument
  Expr value;      // store: the value
  Expr mask, other;
  Expr eviction_policy, cache_modifier, volatile_;
  Expr boundary_check, padding_option;  // block pointers
  std::vector<KwArg> kwargs;
  bool block_pointer = false;  // pointer is a tl.make_block_ptr / advance result
  std::string base;            // pointer parameter the address derives from ("" when unknown)
  int loop_depth = 0;          // number of enclosing loops in the kernel body
  int loop = -1;               // index of the innermost enclosing loop in Kernel::loops
};

// tl.make_block_ptr, tl.advance, tl.make_tensor_descriptor, descriptor loads/stores (TMA).
struct BlockPtr {
  std::string op;  // "make_block_ptr", "advance", "make_tensor_descriptor",
                   // "descriptor_load", "descriptor_store", "_experimental_descriptor_load", ...
  Span span;
  Expr base;
  std::vector<KwArg> kwargs;
  std::string target;
  int loop = -1;
};

struct Dot {
  Span span;
  Span args_span;
  Expr a, b, acc;
  Expr input_precision, allow_tf32, out_dtype, max_num_imprecise_acc;
  std::string form;  // "tl.dot", "tl.dot_scaled", "method" (a.dot(b))
  int loop_depth = 0;
  int loop = -1;
};

struct Reduction {
  std::string op;    // sum, max, min, argmax, argmin, reduce, xor_sum, cumsum, cumprod,
                     // associative_scan, ...
  std::string form;  // "function" (tl.sum(x, axis=1)) or "method" (x.sum(axis=1))
  Span span;
  Expr input;
  Expr axis;
  int loop_depth = 0;
  int loop = -1;
};

struct Atomic {
  std::string op;  // add, max, min, cas, xchg, and, or, xor
  Span span;
  Expr pointer, value, mask, sem, scope;
  std::string base;
  int loop_depth = 0;
};

struct Loop {
  std::string kind;            // "range", "tl.range", "tl.static_range", "static_range", "while", "iter"
  Span span;                   // the whole for/while statement
  Span iter_span;              // the iterable (call) expression; for while: the condition
  Span args_span;              // argument list of range(...)/tl.range(...), to add options
  std::string target;          // loop variable(s)
  Expr start, end, step;       // bound expressions (range: (end) -> start absent)
  std::vector<KwArg> options;  // tl.range keyword options: num_stages, loop_unroll_factor,
                               // warp_specialize, disallow_acc_multi_buffer, flatten, ...
  int depth = 1;               // 1 for an outermost loop
  int parent = -1;             // index in Kernel::loops
};

struct JitCall {
  std::string callee;  // name of the jit function in this module
  Span span;
  int loop_depth = 0;
};

struct LibdeviceCall {
  std::string name;  // function name, e.g. "tanh"
  std::string via;   // the qualifier as written: "libdevice", "tl.extra.cuda.libdevice", "tl.math"
  Span span;
};

enum class KernelClass { kElementwise, kReduction, kSoftmax, kGemm, kAttention, kScan, kOther };

struct Kernel {
  std::string name;
  Span span;      // the whole decorated definition (decorators included)
  Span def_span;  // the `def` statement
  Span name_span;
  Span body_span;
  std::vector<Param> params;
  std::optional<JitDecorator> jit;
  std::optional<Autotune> autotune;
  std::optional<Heuristics> heuristics;  // entries of every @triton.heuristics (merged)
  std::vector<OtherDecorator> other_decorators;
  Span first_decorator_span;  // where an @triton.autotune would be inserted (the topmost decorator)

  std::vector<ProgramId> program_ids;
  std::vector<Arange> aranges;
  std::vector<MemOp> memops;  // loads and stores in source order
  std::vector<BlockPtr> block_ptrs;
  std::vector<Dot> dots;
  std::vector<Reduction> reductions;
  std::vector<Reduction> scans;
  std::vector<Atomic> atomics;
  std::vector<Loop> loops;
  std::vector<JitCall> calls;
  std::vector<LibdeviceCall> libdevice;

  bool launched = false;   // some launch site in the module launches it
  bool is_helper = false;  // called by another jit function and never launched
  KernelClass cls = KernelClass::kOther;
  std::vector<std::string> class_evidence;

  const Param* FindParam(std::string_view n) const {
    for (const auto& p : params)
      if (p.name == n) return &p;
    return nullptr;
  }
};

// Launch sites -----------------------------------------------------------------------------------

struct Assignment {
  std::string name;
  Span span;   // the whole assignment statement
  Expr value;  // its right-hand side: what a rewrite replaces
  bool literal = false;
};

enum class OriginKind {
  kLiteral,        // a literal at the launch site
  kVariable,       // a variable assigned a literal earlier (function or module level)
  kComputed,       // computed at run time (at the launch or in the variable's assignment)
  kFunctionParam,  // a parameter of the enclosing function
  kAutotune,       // supplied by an autotune config
  kHeuristics,     // supplied by @triton.heuristics
  kDefault,        // the kernel's own default (or Triton's default for launch options)
  kMissing,        // not supplied anywhere the analysis can see
};

struct Origin {
  OriginKind kind = OriginKind::kMissing;
  // The expression at the launch site (absent for autotune/heuristics/default/missing).
  Expr at_launch;
  // The literal value (literal, variable, default) as source text, e.g. "1024", "True".
  std::string value;
  // kVariable / kComputed through a variable / kFunctionParam: the variable name and the
  // assignment that reaches the launch (the last one before it in the enclosing function, else at
  // module level). `assignment.value.span` is the exact text a rewrite edits.
  std::string variable;
  std::optional<Assignment> assignment;
  bool multiple_assignments = false;          // other assignments to the variable exist (if/else, loops)
  std::vector<Assignment> other_assignments;  // those other assignments (same scope), source order
  std::string scope;                          // "function" or "module" for the assignment
  // kComputed: the run-time expression (at the launch or the assignment's right-hand side).
  Expr expression;
  // kFunctionParam: parameter name and its default (absent when none).
  std::string function_param;
  Expr function_param_default;
  // kAutotune: the decorator span; kHeuristics: the entry.
  Span decorator_span;
  std::optional<HeuristicsEntry> heuristic;
  std::string note;  // free-form explanation (e.g. "passed through **kwargs")
};

struct LaunchArg {
  int position = -1;    // positional index, -1 for keywords
  std::string keyword;  // keyword name for keyword arguments
  std::string param;    // mapped kernel parameter ("" when it maps to none)
  Expr value;
  Span span;           // whole argument (`name=value` for keywords)
  bool splat = false;  // *args / **kwargs
  // The positional index was inferred: the argument follows a *splat of unknown length and was
  // aligned to the parameters before the first keyword/autotuned/heuristic parameter.
  bool position_inferred = false;
};

// One constexpr parameter or launch option at one launch, with its origin.
struct Binding {
  std::string name;
  bool launch_option = false;  // num_warps, num_stages, num_ctas, maxnreg
  int arg = -1;                // index in Launch::args when passed at the launch
  Origin origin;
};

enum class GridKind { kTuple, kLambda, kVariable, kCall, kOther };

struct Grid {
  GridKind kind = GridKind::kOther;
  Expr expr;  // the subscript as written
  // kVariable: the resolved assignment (local first, then module); resolved_kind classifies it.
  std::optional<Assignment> assignment;
  GridKind resolved_kind = GridKind::kOther;
  Expr resolved;                        // the expression the grid evaluates (after resolution)
  std::vector<Expr> dims;               // tuple elements (of the resolved tuple / lambda body)
  std::string meta_param;               // lambda parameter name (META, meta, ...)
  std::vector<std::string> names;       // identifiers the grid uses (no builtins / module names)
  std::vector<std::string> meta_keys;   // meta['X'] keys
  std::vector<std::string> constexprs;  // kernel constexprs the grid depends on (via meta keys or
                                        // the variables bound to them at this launch)
};

struct Launch {
  Span span;                                   // the whole call `kernel[grid](...)`
  Span args_span;                              // the call's argument list
  std::string kernel;                          // the launched jit function
  std::vector<std::string> kernel_candidates;  // more than one when the callee is an alias chosen
                                               // at run time (fx = a if c else b)
  Expr kernel_ref;                             // as written: "kernel", "self.kernel", "mod._fwd"
  std::string enclosing_function;              // qualified: "Class.method", "outer.<locals>.inner", "<module>"
  Span enclosing_span;
  bool in_lambda = false;
  Grid grid;
  std::vector<LaunchArg> args;
  std::vector<Binding> bindings;      // every constexpr param, then num_warps, num_stages, num_ctas,
                                      // maxnreg
  std::vector<std::string> unmapped;  // keyword names that are not kernel params or options
  const Binding* FindBinding(std::string_view n) const {
    for (const auto& b : bindings)
      if (b.name == n) return &b;
    return nullptr;
  }
};

struct ModuleModel {
  std::string path;
  std::vector<Kernel> kernels;
  std::vector<Launch> launches;
  // Names under which the module sees triton pieces.
  std::vector<std::string> triton_aliases;     // "triton"
  std::vector<std::string> tl_aliases;         // "tl"
  std::vector<std::string> libdevice_aliases;  // "libdevice", "tl.extra.cuda.libdevice", ...
  std::vector<std::string> notes;              // non-fatal observations

  const Kernel* FindKernel(std::string_view n) const {
    for (const auto& k : kernels)
      if (k.name == n) return &k;
    return nullptr;
  }
};

// Analyses a parsed module. Fails (InvalidArgument) when the module has no @triton.jit function;
// syntax errors are the caller's business (check Tree::errors() first): analysis of a tree with
// error nodes is best effort.
Result<ModuleModel> AnalyzeModule(const pyast::Tree& tree);

const char* ParamKindName(ParamKind k);          // "pointer", "scalar", "constexpr", "descriptor"
const char* ParamEvidenceName(ParamEvidence e);  // "annotation", "usage", "name_suffix", "default"
const char* KernelClassName(KernelClass c);      // "elementwise", "reduction", "softmax", "gemm",
                                                 // "attention", "scan", "other"
const char* OriginKindName(OriginKind k);        // "literal", "variable", "computed",
                                                 // "function_param", "autotune", "heuristics",
                                                 // "default", "missing"
const char* GridKindName(GridKind k);            // "tuple", "lambda", "variable", "call", "other"

}  // namespace kiln::analysis
