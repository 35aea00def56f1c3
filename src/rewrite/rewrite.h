// kiln/rewrite: source-to-source transformations of Triton modules, each keeping semantics.
//
// A rewrite reads the static model (analysis::ModuleModel) of a module, decides whether it applies
// to one target kernel (Check, with a reason when it does not), and produces the new module text
// (Apply) through a pyast::EditSet: minimal, local edits, every other byte of the file identical.
// The result is re-parsed (no syntax error) and re-analysed, and invariants are checked: the target
// kernel still exists, every launch of it still binds every constexpr, the tuned names are not
// passed twice (autotune + launch keyword).
//
// Everything here is a value: a Request says what to do, Apply returns the new text and notes. The
// search (src/search) composes candidates as a list of Requests applied in order (ApplySequence).
//
// Rewrites (see docs/rewrites.md for the exact applicability rules):
//   SetParams       retune constexprs and launch options where they are set (launch literal,
//                   variable assigned a literal, kernel default, autotune configs); grid kept
//                   consistent
//   InsertAutotune  insert or replace @triton.autotune (configs, key); drop the tuned keywords at the
//                   launch; the grid becomes a lambda over META when it used the tuned values
//   GroupMSwizzle   grouped program-id ordering (L2 reuse) for 2-D tiled kernels, GROUP_M constexpr
//   EvictionHints   eviction_policy / cache_modifier on streaming loads read once
//   DotPrecision    input_precision= on tl.dot
//   PipelineLoop    for k in range(...) -> tl.range(..., num_stages=S) for loops with dots/loads
//   SplitK          SPLIT_K constexpr, a third grid axis, atomic accumulation of partial products
//   PersistentGrid  one program per SM looping over tiles with a stride of the number of programs
//   RowsPerProgram  several consecutive programs of axis 0 run in turn in one program (independent programs)
//   RemoveMasks     drop load/store masks under a divisibility guarantee (with a guard)
//   LiftLiterals    literal tile sizes in a kernel body (`tl.arange(0, 128)`) become constexpr
//                   parameters with the literal as default (tunable by SetParams afterwards)
//
// Roadmap: rewrites are local and syntactic over the model's spans; anything the model cannot
// pin down (computed origins, configs produced by comprehensions, launches through **kwargs) is
// refused with a reason, never guessed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/model.h"
#include "analysis/tunables.h"
#include "common/status.h"
#include "pyast/pyast.h"

namespace kiln::rewrite {

// What a rewrite applies to (one kernel and its launches) and what may be tuned in it are analysis:
// analysis/tunables.h (Target, Tunables, ExtractTunables).
using analysis::Target;

// Requests ---------------------------------------------------------------------------------------

// Values are integers; a tunable whose current literal is a bool is written as True/False.
using ParamValues = std::map<std::string, int64_t>;

struct SetParams {
  ParamValues values;  // constexpr names and launch options
};

struct TuneConfig {
  ParamValues params;  // constexpr name -> value
  int num_warps = 4;
  int num_stages = 3;
  std::optional<int> num_ctas;
  std::optional<int> maxnreg;
};

struct InsertAutotune {
  std::vector<TuneConfig> configs;
  // Autotune key (kernel parameter names). Empty: the scalar (non-constexpr) parameters the kernel
  // uses in masks, loop bounds or the grid.
  std::vector<std::string> key;
  // An existing @triton.autotune keeps its configs and key: the new configs go in front of them
  // (`[new...] + (configs as written)`), so the autotuner still has every original choice per shape.
  bool keep_existing = false;
  // Configs kiln writes are timed by the autotuner as kiln timed them (`do_bench=_kiln_autotune_bench`, a
  // helper defined beside the kernel); an existing decorator that names its own do_bench keeps it, and
  // configs added in front of existing ones (keep_existing) leave the module's benchmark alone.
  bool kiln_bench = true;
  // Shapes kiln measured (a per-shape autotune of its winner, the first config, and the original's): each
  // pinned key runs the first config (true) or chooses among the others (false) without the autotuner
  // timing the pinned-out ones (`prune_configs_by` with the helper `_kiln_pinned`); other keys are tuned.
  // `pin_names` are the parameters of the key; each pin's text is a Python tuple of their values.
  std::vector<std::string> pin_names;
  std::vector<std::pair<std::string, bool>> pins;
};

struct GroupMSwizzle {
  int group_m = 8;  // value of the GROUP_M constexpr (added as a kernel default and at launches)
};

struct EvictionHints {
  std::string eviction_policy = "evict_first";  // "" to leave alone
  std::string cache_modifier;                   // "" | ".cg" | ".ca" | ".cv"
  // Non-empty: the hints are switched by a new constexpr kernel parameter of this name (default 0, the
  // original's loads): `eviction_policy='evict_first' if SWITCH else ''`, so the configs of one
  // @triton.autotune can differ in the hint (SWITCH: 1 in a config's kwargs turns it on).
  std::string switch_param;
};

struct DotPrecision {
  std::string precision = "tf32";  // "tf32" | "tf32x3" | "ieee"
};

struct PipelineLoop {
  int num_stages = 3;
  int loop = -1;  // index into Kernel::loops; -1: every eligible loop
};

struct SplitK {
  int split_k = 4;
};

struct PersistentGrid {
  // Number of programs. 0: the device's SM count (torch.cuda.get_device_properties(...)
  // .multi_processor_count, read at run time; falls back to the tile count on CPU).
  int num_programs = 0;
};

struct RowsPerProgram {
  int rows = 4;
  // > 0: the loop over rows is `tl.range(..., num_stages=stages)`, so the compiler prefetches the next rows'
  // loads while one row computes (the programs are independent, so no row reads what another writes). On an
  // H200, 8 rows of dequantize_rowwise at one warp ran 78 us plain and 63 us with stages=3.
  int stages = 0;
};

// A guarantee `expr % multiple == 0` supplied by the user or by tl.multiple_of hints, e.g.
// {"n_elements", "BLOCK_SIZE"}; `multiple` is a constexpr name or an integer literal.
struct Divisibility {
  std::string expr;
  std::string multiple;
};

struct RemoveMasks {
  std::vector<Divisibility> guarantees;
  // Keep a guard: a host-side assert of each guarantee before the launch (true), or none.
  bool guard = true;
};

// Literal tile sizes in the kernel body become constexpr parameters `KILN_BLOCK<i>: tl.constexpr = L`
// (one per distinct literal L, appended to the signature), every occurrence replaced by the name. A
// literal is lifted only when it is a `tl.arange(0, L)` bound (a power of two >= 16) and each of its
// occurrences in the body is a tiling position (arange bound, product, loop step, increment, block
// shape, cdiv divisor, multiple_of/max_contiguous hint) and no host code of the launching function
// nor a called jit function uses it; others stay fixed with a note. Whether a lifted size may then
// take other values is ExtractTunables' call on the lifted module (divisors, per-block data, grid).
struct LiftLiterals {
  std::vector<int64_t> values;  // the literals to lift (empty: every liftable one)
};

using Request = std::variant<SetParams, InsertAutotune, GroupMSwizzle, EvictionHints, DotPrecision, PipelineLoop,
                             SplitK, PersistentGrid, RowsPerProgram, RemoveMasks, LiftLiterals>;

enum class RewriteKind {
  kSetParams,
  kInsertAutotune,
  kGroupMSwizzle,
  kEvictionHints,
  kDotPrecision,
  kPipelineLoop,
  kSplitK,
  kPersistentGrid,
  kRowsPerProgram,
  kRemoveMasks,
  kLiftLiterals,
};

RewriteKind KindOf(const Request& r);
const char* RewriteKindName(RewriteKind k);  // "set_params", "insert_autotune", "group_m_swizzle",
                                             // "eviction_hints", "dot_precision", "pipeline_loop",
                                             // "split_k", "persistent_grid", "rows_per_program",
                                             // "remove_masks", "lift_literals"
// One line for reports and the inverse of ParseRequest, e.g.
//   set_params BLOCK_SIZE=256 num_warps=8
//   insert_autotune key=n_elements configs=BLOCK_SIZE:128,num_warps:4,num_stages:3;BLOCK_SIZE:256,num_warps:8
//   group_m_swizzle GROUP_M=8          eviction_hints eviction_policy=evict_first cache_modifier=.cg
//   dot_precision input_precision=ieee pipeline_loop num_stages=3 [loop=0]
//   split_k SPLIT_K=4                  persistent_grid [programs=132]
//   rows_per_program rows=4 [stages=3] remove_masks n_elements%BLOCK_SIZE [guard=0]
//   lift_literals [values=128,64]
std::string Describe(const Request& r);
Result<Request> ParseRequest(std::string_view text);
// Several requests applied in turn, separated by ";;": "rows_per_program rows=8 ;; set_params num_warps=1".
Result<std::vector<Request>> ParseRequests(std::string_view text);

// A unified diff (3 lines of context) from `before` to `after` ("" when equal).
std::string UnifiedDiff(std::string_view before, std::string_view after, const std::string& label_a,
                        const std::string& label_b);

// Check / Apply ----------------------------------------------------------------------------------

struct Applicability {
  bool applies = false;
  std::string reason;  // why not (lower-case sentence), or what it will do when it applies
  explicit operator bool() const { return applies; }
};

// Whether a rewrite of this kind can apply to the target at all, from the static model (and the
// tree it was built from) only; a default request of that kind is checked.
Applicability Check(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                    RewriteKind kind);
// Whether this request (with its values) applies: e.g. SetParams of a non-editable name or a
// non-power-of-two block size is refused here.
Applicability Check(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                    const Request& r);
// Every kind that applies, with its reason (for the search's move list).
std::vector<std::pair<RewriteKind, Applicability>> CheckAll(const pyast::Tree& tree, const analysis::ModuleModel& model,
                                                            const Target& target);

struct Rewritten {
  std::string source;              // the whole new module text
  std::vector<std::string> notes;  // what was edited, e.g. "launch at line 40: BLOCK_SIZE 1024 -> 256"
};

// Applies one request. `model` must be AnalyzeModule(tree). Fails with InvalidArgument and the
// Check reason when the request does not apply, and with Internal when the edit does not re-parse
// or re-analyse with the invariants.
Result<Rewritten> Apply(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                        const Request& r);

// Parses `source`, then applies each request in order (re-parsing and re-analysing between them).
// Launch indices in `target` refer to the model of `source` and are re-resolved by position among
// the kernel's launches after each step.
Result<Rewritten> ApplySequence(const std::string& source, const std::string& path, const Target& target,
                                const std::vector<Request>& requests);

// Re-parses and re-analyses `source` and checks the invariants against the model before the
// rewrite (`before`): the target kernel exists, it has as many launch sites, every constexpr
// without a default is bound at each launch (or by autotune/heuristics), and no name is both
// autotuned and passed at a launch.
Status CheckInvariants(const std::string& source, const analysis::ModuleModel& before, const Target& target);

}  // namespace kiln::rewrite
