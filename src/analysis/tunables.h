// kiln/analysis: what may be tuned in a kernel, and how (the search builds its space from this).
//
// ExtractTunables reads the static model and the syntax tree of a module and lists, for one kernel and
// its launches, every constexpr parameter and launch option: where its value is set (the text a rewrite
// would edit), whether it may be changed and why not, and the constraints a new value must meet (powers
// of two, bounds, divisors, the grid following it). The facts come from the kernel's data flow
// (analysis/dataflow.h); rewrite (SetParams, InsertAutotune) edits exactly the sites named here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "common/status.h"
#include "pyast/pyast.h"

namespace kiln::analysis {

// What a rewrite applies to: one kernel and the launches of it (all launches when empty).
struct Target {
  std::string kernel;
  std::vector<int> launches;  // indices into ModuleModel::launches
};

// Tunables ---------------------------------------------------------------------------------------

// Where a tunable's value is set and can be edited.
enum class TunableSite {
  kLaunchLiteral,  // a literal at the launch (positional or keyword): edit it there
  kVariable,       // a variable assigned a literal before the launch: edit the assignment
  kKernelDefault,  // the kernel parameter's default (not passed at the launch): edit the default
  kAutotune,       // set by @triton.autotune configs: rewrite the configs
  kOptionDefault,  // a launch option not given anywhere (Triton's default): add a keyword
  // Hidden knobs: values a wrapper computes or takes from its caller (the current value is known only at
  // run time, from the original's compile facts). Editable when they only change performance.
  kLaunchOverride,  // computed or caller-passed at the launch: the launch argument becomes the literal
  kAssignOverride,  // a variable assigned a computed value once, read only by the launch and grid: its
                    // right-hand side becomes the literal
  kParamRebind,     // the wrapper's parameter, read only by the launch and grid: the wrapper rebinds it to
                    // the literal as its first statement (its signature stays)
  kNotEditable,     // heuristics, **kwargs, other host readers, ...: see `reason`
};
// "launch_literal", "variable", ..., "param_rebind", "not_editable".
const char* TunableSiteName(TunableSite s);
// The value is set where the original computes it or takes it from its caller (the three hidden sites).
inline bool IsHiddenSite(TunableSite s) {
  return s == TunableSite::kLaunchOverride || s == TunableSite::kAssignOverride || s == TunableSite::kParamRebind;
}

// What a tunable is for, as far as the kernel body shows (the search tunes kBlock and
// kLaunchOption; kFlag values select behaviour and are left alone unless asked).
enum class TunableRole {
  kBlock,         // a tl.arange bound / block shape (tile or chunk size)
  kLaunchOption,  // num_warps, num_stages, num_ctas, maxnreg
  kFlag,          // used in an `if`/comparison or a bool: changes what the kernel computes
  kOther,         // anything else (e.g. GROUP_M, SPLIT_K, loop unroll factors)
};

struct Tunable {
  std::string name;
  TunableRole role = TunableRole::kOther;
  bool launch_option = false;  // num_warps, num_stages, num_ctas, maxnreg
  // Current value when known (a single value across all target launches), as an integer;
  // `value_text` is the source text ("64", "True", "triton.next_power_of_2(N)").
  std::optional<int64_t> value;
  std::string value_text;
  bool boolean = false;                      // current literal is True/False: written back as such
  std::vector<int64_t> autotune_values;      // kAutotune: the value in each config (distinct, sorted)
  std::optional<int64_t> autotune_first;     // kAutotune: the value in the first config (where a search starts)
  OriginKind origin = OriginKind::kMissing;  // at the first target launch
  TunableSite site = TunableSite::kNotEditable;
  bool editable = false;
  std::string reason;  // why not editable (empty when editable)
  // Constraints.
  bool power_of_two = false;  // used as a tl.arange bound / block shape (or a launch option that
                              // must be one: num_warps)
  bool in_grid = false;       // the launch grid depends on it
  bool grid_follows = false;  // in_grid and the grid reads it through meta[...] or the same
                              // variable that is edited, so it stays right by itself
  int64_t min_value = 1;
  int64_t max_value = 0;  // 0: no bound known
  // The kernel assumes it divides a run-time extent (an access not masked along its tl.arange, a block
  // pointer without boundary_check, `E // B`): values must divide max_value, the largest value it was
  // written with (DivisorConstexprs). `bound` says where.
  bool divides_max = false;
  std::string bound;
  // One host variable sets several constexprs of the launch (`BLOCK_M=BLOCK, BLOCK_N=BLOCK`). The owner
  // (the one the grid follows) is set by editing the variable; `pinned_siblings` are the others, which an
  // edit of the variable pins at the launch to their own values. A non-owner names its owner in
  // `shares_owner` and is set at the launch (site kLaunchOverride).
  std::vector<std::string> pinned_siblings;
  std::string shares_owner;
  // The tiles of two or more dimensions it is a side of (dataflow.h TileShapes), each dimension as written.
  std::vector<std::vector<std::string>> tiles;
};

struct Tunables {
  std::string kernel;
  KernelClass cls = KernelClass::kOther;
  std::vector<int> launches;  // the launches considered
  bool autotuned = false;     // the kernel already carries @triton.autotune
  std::vector<std::string> autotune_key;
  std::vector<Tunable> items;      // constexpr params first (declaration order), then options
  std::vector<std::string> notes;  // e.g. "grid uses n_blocks computed from literal 1024"

  const Tunable* Find(std::string_view n) const {
    for (const auto& t : items)
      if (t.name == n) return &t;
    return nullptr;
  }
};

// Tunables of `target` (fails: kernel not found, not launched from the module). `model` must be
// AnalyzeModule(tree): some constraints (tile sizes the grid must follow, power-of-two block sizes)
// need the syntax tree.
Result<Tunables> ExtractTunables(const pyast::Tree& tree, const ModuleModel& model, const Target& target);

// Triton's launch options, in the order tunables list them; whether `name` is one.
inline constexpr const char* kLaunchOptionNames[] = {"num_warps", "num_stages", "num_ctas", "maxnreg"};
bool IsLaunchOption(std::string_view name);

// Launches of the target kernel (indices), resolving an empty list to all of them.
std::vector<int> TargetLaunches(const ModuleModel& m, const Target& t);

}  // namespace kiln::analysis
