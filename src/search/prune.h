// kiln/search: pruning of configurations before compiling (from the config alone) and after
// compiling (from the compiled kernels' facts).
//
// Before: for a tiled product (BLOCK_M, BLOCK_N, BLOCK_K present) the shared memory of the
// pipeline, bytes(dtype) * (BM*BK + BK*BN) * num_stages, must fit the opt-in limit per block
// (232448 bytes on H100/H200), and the fp32 accumulator, BM*BN / (32 * num_warps) registers per
// thread, must fit the register budget. A block of threads has at most 1024 threads.
// After: kernels that spill more than `max_spills` registers (or more than the original did) or
// whose shared memory exceeds the limit are dropped before timing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/result.h"
#include "search/space.h"

namespace kiln::search {

struct PruneContext {
  int64_t smem_limit = 232448;  // shared memory per block, opt-in (H100/H200)
  int dtype_bytes = 2;          // element size of the tiles' operands (fp16/bf16 by default)
  int64_t max_acc_regs = 256;   // accumulator registers per thread before spilling is certain
  int max_threads = 1024;
  int64_t max_spills = 4;       // "more than a few" spilled registers
  int64_t baseline_spills = 0;  // the original's spills: never prune below what it already had
  // Learned while searching: configs whose compile ran out of a resource (shared memory, registers). A config
  // that needs at least as much of everything (every block size and the stages >= one of them, the warps
  // and other values equal) is pruned without compiling.
  std::vector<Config> out_of_resources;
  // The constexprs the original ran with (TileElements' other sides), and the elements a tile of 1-D blocks may
  // hold (more where the original's own tile does): index_select_bwd's [BLOCK_SIZE_INDEX, BLOCK_SIZE_COL] at
  // 2048 x 1024 is two million elements per program.
  Config ran_with;
  int64_t max_tile_elems = 16384;
};

// Whether a compile error says the config ran out of a hardware resource (Triton's OutOfResources).
bool IsResourceFailure(const std::string& message);

// Shared memory the pipeline of a tiled product needs (0 when the config has no BM/BN/BK).
int64_t GemmSharedBytes(const Space& s, const Config& c, int dtype_bytes);
// fp32 accumulator registers per thread (0 when the config has no BM/BN).
int64_t AccumulatorRegs(const Space& s, const Config& c);

// A reason to drop `c` without compiling it, or nullopt.
std::optional<std::string> PruneBeforeCompile(const Space& s, const Config& c, const PruneContext& p);
// A reason to drop a compiled candidate without timing it, or nullopt.
std::optional<std::string> PruneAfterCompile(const std::vector<exec::KernelFacts>& kernels, const PruneContext& p);

// Infers the operand element size from a compiled baseline: shared_bytes of its kernel divided by
// (BM*BK + BK*BN) * stages, rounded to 1, 2 or 4. nullopt when the config is not a tiled product or
// the facts lack shared memory.
std::optional<int> InferDtypeBytes(const Space& s, const Config& c, const std::vector<exec::KernelFacts>& kernels);

// The values the original ran with for the parameters known only at run time (`names`: a wrapper computes
// them or takes them from its caller): from the compile facts of `kernel` (its recorded constexprs, warps
// and stages; the last launch reported). Each found value joins its parameter's values and becomes the
// baseline's; a note says which. A block size's values were built around a placeholder (1024, or 64 for
// a tile): the powers of two within `opts.block_span` of the recorded value (at least opts.block_min, at
// most the largest value already there) join too, as if it had been known (fused_recurrent_retention's
// BV = min(d, 32) was searched from 128 up). A name without a recorded value keeps its placeholder (note).
std::vector<std::string> AdoptRecordedValues(const std::vector<std::string>& names, const std::string& kernel,
                                             const std::vector<exec::KernelFacts>& kernels, Space* s,
                                             Config* baseline, const SpaceOptions& opts = {});

}  // namespace kiln::search
