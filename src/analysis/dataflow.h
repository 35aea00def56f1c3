// kiln/analysis: kernel data flow, the facts that decide what may be tuned (see tunables.h).
//
// Local data flow over a kernel's body and its launches: which names derive from the program id,
// which constexprs are tile sizes, must be powers of two, enter the computed values, are assumed to
// divide an extent, or set the granularity of per-block data. Syntactic and conservative: what cannot
// be pinned down is reported as a reason, never guessed. Recursion is bounded (nesting depth by
// pyast::Tree::kMaxDepth, variable chains and helper calls by explicit depths).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "pyast/pyast.h"

namespace kiln::analysis {

// Whether the expression depends on variable `var`, looking through local assignments of the
// enclosing function (then module), up to `depth` levels.
bool DependsOn(const pyast::Tree& tree, const pyast::Node& expr, std::string_view var, uint32_t before, int depth = 4);
// Expression text with variable chains inlined where they lead to one of `vars` (each replaced by
// its mapping). Returns nullopt when some dependency cannot be inlined (multiple assignments).
std::optional<std::string> InlineVars(const pyast::Tree& tree, const pyast::Node& expr,
                                      const std::map<std::string, std::string>& vars, uint32_t before, int depth = 4,
                                      const std::map<std::string, std::string>* literals = nullptr);

pyast::Node KernelDef(const pyast::Tree& tree, const Kernel& k);  // the function_definition node
// Variables derived from tl.program_id in the kernel body (transitively through assignments).
std::set<std::string> PidVars(const pyast::Tree& tree, const Kernel& k);
// Constexprs multiplied with a program-id-derived value (tile sizes the grid must follow).
std::set<std::string> TileConstexprs(const pyast::Tree& tree, const Kernel& k);
// Constexprs that step over an extent: multiplied by the program id, a loop step, an increment or
// advance inside a loop, multiplied by a loop variable. One that does not covers its extent in one
// block (`cols = tl.arange(0, BLOCK); mask = cols < N` over a whole row): only values >= the extent
// keep such a kernel right.
std::set<std::string> SteppingConstexprs(const pyast::Tree& tree, const Kernel& k);
// Constexprs that must be powers of two (tl.arange bounds, tl.zeros/full shapes, block_shape).
std::set<std::string> PowerOfTwoConstexprs(const pyast::Tree& tree, const Kernel& k);
// The tiles of two or more dimensions a constexpr is a side of: the shapes of `tl.zeros` / `tl.full` and the
// block_shape of `tl.make_block_ptr` whose dimensions are all constexpr names or integer literals
// (fused_recurrent_rwkv6's state `tl.zeros([BV, BK])`). Each dimension as written ("BV", "32"). A block that is one
// side of such a tile holds the product of its sides in elements, not its own value (search::TileElements).
using TileShape = std::vector<std::string>;
std::map<std::string, std::vector<TileShape>> TileShapes(const pyast::Tree& tree, const Kernel& k);
// The one pointer parameter an address expression derives from ("" when none or several).
std::string PointerBase(const pyast::Tree& tree, const Kernel& k, const pyast::Span& pointer);
// Constexprs whose value enters the computed data (not only shapes, offsets, masks and loop bounds):
// a constexpr (or a name computed from constexprs only) combined with a loaded value in arithmetic,
// bitwise ops, comparisons, tl.where / elementwise calls, stored as a value, or passed to a called
// jit function whose parameter is used that way (`x & SIGN_MASK`, `acc / BLOCK`, `tl.where(m, ZERO, y)`).
// Changing one changes the results: not a tunable. Name -> where (for the refusal reason).
std::map<std::string, std::string> ValueConstexprs(const pyast::Tree& tree, const ModuleModel& m, const Kernel& k);
// Constexprs the kernel assumes to divide a run-time extent: B indexes an access that is not masked along
// it (`tl.load(p + tl.arange(0, B))` without a mask over those offsets, a block pointer whose
// block_shape holds B loaded or stored without boundary_check on that dimension), or a run-time value is
// floor-divided by it (`groupsize // B`). Offsets wrapped by `% X` (the tutorial's `% M`) are in bounds
// and do not count. A larger B breaks the assumption (reads and writes past the end, a group index of
// 0); divisors of the values it was written with keep it. `tiled`: B steps over the extent (multiplied
// by the program id, a loop step or increment, multiplied by a loop variable); otherwise it covers the
// extent in one piece and no other value keeps the kernel right. Name -> use.
struct DivisorUse {
  std::string where;  // e.g. "tl.load(b_ptrs) at line 72 is not masked along it"
  bool tiled = false;
};
std::map<std::string, DivisorUse> DivisorConstexprs(const pyast::Tree& tree, const ModuleModel& m, const Kernel& k);
// Constexprs that set the granularity of per-block data the kernel indexes: a pointer is offset by a
// value divided by B (`X // B`, `X / B`, `cdiv(X, B)`), in its own expression or through a variable
// assigned one (attn_fwd_triton: `q_scale_offset = off_hz * tl.cdiv(N_CTX, BLOCK_M)` then
// `Q_scale_ptr = Q_scale + q_scale_offset + start_m`: one quantization scale per BLOCK_M rows). The data
// was laid out for the written value; another value reads other elements. A division whose result is
// itself a divisor (`k // (groupsize // B)`) scales by B and does not count. Name -> where.
std::map<std::string, std::string> BlockIndexConstexprs(const pyast::Tree& tree, const ModuleModel& m, const Kernel& k);
std::string TlAlias(const ModuleModel& m);
std::string TritonAlias(const ModuleModel& m);

// How the grid of launch `l` relates to constexpr `name` (SetParams, InsertAutotune, ExtractTunables).
struct GridRelation {
  bool depends = false;  // the grid reads it (meta key or the variable bound to it)
  bool via_meta = false;
  std::optional<pyast::Span> literal;  // a unique integer literal in the grid equal to its current value
};
GridRelation RelateGrid(const pyast::Tree& tree, const Launch& l, const std::string& name);

}  // namespace kiln::analysis
