// kiln/search: the search space, its configurations and their neighbourhoods.
//
// A Space is a list of tunable parameters, each with an ordered list of allowed integer values
// (block sizes are powers of two, so "double" and "halve" are the next and previous value; num_warps
// likewise; num_stages steps by one). A Config maps parameter names to values. Spaces come from the
// analysis module's tunables (SpaceFromTunables): only editable tunables whose role is known (block
// sizes, GROUP_M, warps, stages) or that must be powers of two are searched.
//
// Roadmap: conditional parameters (SPLIT_K only with the split-K rewrite) and source-level moves
// (persistent grid, eviction hints) join the space as categorical parameters once the loop
// composes rewrite sequences per candidate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::analysis {
struct Tunables;
}

namespace kiln::search {

// What a parameter means to pruning and to the rule-guided moves.
enum class Role { kBlockM, kBlockN, kBlockK, kBlock, kGroupM, kNumWarps, kNumStages, kOther };
const char* RoleName(Role r);
// A block size (1-D or a tile side of a 2-D kernel).
inline bool IsBlockRole(Role r) { return r == Role::kBlockM || r == Role::kBlockN || r == Role::kBlockK || r == Role::kBlock; }
// From the name: BLOCK_M / BLOCK_SIZE_M / BM / TILE_M -> kBlockM, ..., BLOCK / BLOCK_SIZE / XBLOCK /
// RBLOCK -> kBlock, GROUP_M / GROUP_SIZE_M -> kGroupM, num_warps, num_stages.
Role GuessRole(const std::string& name);

struct Param {
  std::string name;
  Role role = Role::kOther;
  std::vector<int64_t> values;  // ascending, distinct
  bool launch_option = false;   // num_warps, num_stages, ...
  // The tiles of two or more dimensions this block is a side of (analysis::TileShapes), each dimension as written:
  // a parameter's name, another constexpr's, or an integer literal (TileElements).
  std::vector<std::vector<std::string>> tiles = {};
};

using Config = std::map<std::string, int64_t>;

// A source move searched like a value (issue 21): 1 renders the kernel's streaming loads (read once per
// program) with eviction_policy='evict_first' (rewrite::EvictionHints), 0 leaves them as they are. In the
// space only where that rewrite applies; the diagnosis's move `eviction_hints` sets it.
inline constexpr const char* kEvictFirstParam = "kiln_evict_first";

// "BLOCK_M=64 BLOCK_N=128 num_warps=4" (sorted by name): stable key for visited sets and reports.
std::string ConfigKey(const Config& c);
nlohmann::json ConfigToJson(const Config& c);

class Space {
 public:
  Space() = default;
  explicit Space(std::vector<Param> params) : params_(std::move(params)) {}

  const std::vector<Param>& params() const { return params_; }
  bool empty() const { return params_.empty(); }
  const Param* Find(const std::string& name) const;
  // Product of the value counts (as a double: it can be large).
  double Size() const;

  // Index of each parameter's value (the nearest allowed value when not in the list).
  std::vector<int> Indices(const Config& c) const;
  Config At(const std::vector<int>& idx) const;
  // Features in [0,1]^d for the Gaussian process: index / (count - 1).
  std::vector<double> Features(const Config& c) const;
  // Configs one step away in one parameter (index +-1): double/halve a block size, x2/÷2 warps,
  // +-1 stage. Parameters not in `c` are taken at their first value.
  std::vector<Config> Neighbors(const Config& c) const;
  // Configs two coupled steps away, for where single steps are all worse: a tile dimension and the
  // warps in the same direction (a bigger tile needs more warps: on an H100, matmul_triton2's 256x128
  // tile was 4x slower than 128x128 at 4 warps and the fastest of 100 configs at 8), BLOCK_K and the
  // stages in opposite directions (shared memory per stage), and BLOCK_M and BLOCK_N in opposite
  // directions (the same tile area, another shape).
  std::vector<Config> CoupledNeighbors(const Config& c) const;
  // Every config (row-major) when Size() <= limit; else empty.
  std::vector<Config> Enumerate(size_t limit) const;
  // A config with every parameter at a uniformly random index, from a 64-bit state (splitmix).
  Config Random(uint64_t* state) const;
  // `c` restricted to this space's parameters, missing ones filled from `fallback`.
  Config Complete(const Config& c, const Config& fallback) const;

  nlohmann::json ToJson() const;
  // The space restricted to a grid {"PARAM": [values...]}: a listed parameter takes exactly those
  // values (plus `keep`'s value, so the original stays representable), an unlisted one only `keep`'s.
  // InvalidArgument errors name unknown parameters and non-integer values; `s` is unchanged on error.
  static Status RestrictToGrid(const nlohmann::json& grid, const Config& keep, Space* s);

 private:
  std::vector<Param> params_;
};

struct SpaceOptions {
  // Block sizes: powers of two within [current / span, current * span], clipped to [min, max].
  int64_t block_span = 8;
  int64_t block_min = 16;
  int64_t block_max_2d = 256;    // tile sizes of 2-D (dot) kernels
  int64_t block_max_1d = 16384;  // 1-D blocks (elementwise, row reductions)
  // Always searched, whatever the current value: where tuned kernels' blocks usually sit.
  int64_t canonical_1d_lo = 256, canonical_1d_hi = 4096;
  int64_t canonical_2d_lo = 32, canonical_2d_hi = 128;
  std::vector<int64_t> warps = {1, 2, 4, 8, 16};
  std::vector<int64_t> warps_dot = {2, 4, 8};
  std::vector<int64_t> stages = {1, 2, 3, 4};
  std::vector<int64_t> stages_dot = {2, 3, 4, 5, 6};
  std::vector<int64_t> group_m = {1, 4, 8, 16};
  bool has_dot = false;
};

// Values to search for one parameter, always including `current` (when given) and any autotune
// values seen.
std::vector<int64_t> CandidateValues(Role role, std::optional<int64_t> current, const std::vector<int64_t>& seen,
                                     int64_t min_value, int64_t max_value, const SpaceOptions& o);

// The space of the editable tunables and the baseline config (their current values; Triton's
// defaults 4 warps / 3 stages where not set). Tunables that are not editable are listed in
// `skipped` with the reason.
struct SpaceBuild {
  Space space;
  Config baseline;
  std::vector<std::string> skipped;
  // Parameters whose original value is known only at run time (a wrapper computes it or takes it from its
  // caller: analysis::IsHiddenSite); their baseline value is a placeholder until the original has run
  // (AdoptRecordedValues, search/prune.h).
  std::vector<std::string> runtime_valued;
};
SpaceBuild SpaceFromTunables(const analysis::Tunables& t, const SpaceOptions& o);

// Configs the search measures first (issue 21), each a complete config of `s` (from `base`, values
// snapped to the nearest allowed one, duplicates and the baseline dropped), best guesses first:
// - GEMM-like (BLOCK_M and BLOCK_N parameters): the tiles tuned Triton GEMMs use on Hopper, 128x128x64
//   and 128x256x64 at 8 warps / 3 stages, 64x256x32, 128x128x64, 128x64x64 and 64x128x64 at 4 warps /
//   4 stages, GROUP_M 8 where the kernel has one;
// - memory-bound 1-D blocks (a block parameter, no BLOCK_M/BLOCK_N): blocks and warps that keep 8-16
//   elements per thread and at least 64 KiB of fp32 loads in flight per SM at full occupancy (64 warps):
//   1024/4, 2048/8, 4096/8, 4096/16 (block/warps).
// Empty for other spaces.
// smaller_first (the diagnosis asks for smaller tiles: spilled registers, occupancy held by registers): 2-D tiles
// with a smaller area than the original's come first, the largest of them first, then equal areas, then larger
// ones, and of equal areas those that keep the original's BLOCK_N >= BLOCK_M (or <) first (an attention
// kernel spilling at 128x128: 64x128, then 128x64, before 128x256).
// The elements block `p` holds at value `v`: the product of the sides of the largest tile it is a side of (the
// other sides from `c`, else `fixed`, the values the original ran with, else an integer literal), or `v` when it is
// a side of no tile whose sides are all known. fused_recurrent_rwkv6's BV=32 beside BK=32 in `tl.zeros([BV, BK])`
// holds 1024 elements, not 32.
int64_t TileElements(const Param& p, int64_t v, const Config& c, const Config& fixed);
// The tile whose elements TileElements counts (the largest one whose sides are all known), or nullptr.
const std::vector<std::string>* LargestTile(const Param& p, int64_t v, const Config& c, const Config& fixed);
// `fixed`: values the original ran with outside the space (TileElements): the 1-D seeds (1024-4096 elements) of a
// block that is one side of a tile set it so that its tile holds them.
std::vector<Config> TunedSeeds(const Space& s, const Config& base, bool smaller_first = false,
                               const Config& fixed = {});

}  // namespace kiln::search
