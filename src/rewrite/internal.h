// kiln/rewrite: helpers shared by the rewrite implementations (not part of the public API).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

namespace kiln::rewrite::internal {

using analysis::Kernel;
using analysis::Launch;
using analysis::Param;
using analysis::ModuleModel;
using pyast::EditSet;
using pyast::Node;
using pyast::Span;
using pyast::Tree;

// Text --------------------------------------------------------------------------------------------
uint32_t LineStart(std::string_view text, uint32_t byte);
uint32_t LineEnd(std::string_view text, uint32_t byte);  // offset of the '\n' (or text end)
std::string IndentOf(std::string_view text, uint32_t byte);  // leading whitespace of byte's line
bool IsIdentifier(std::string_view s);
std::optional<int64_t> ParseIntLiteral(std::string_view s);
bool IsPowerOfTwo(int64_t v);
std::string Trim(std::string_view s);
// Indentation unit used by the block that starts at `byte` relative to its parent (default 4).
std::string ReindentBlock(std::string_view block, const std::string& extra);

// Tree ---------------------------------------------------------------------------------------------
// The smallest named node that covers exactly `span` (or the smallest covering it).
Node NodeAt(const Tree& tree, const Span& span);
Node NodeAtBytes(const Tree& tree, uint32_t begin, uint32_t end);
// Identifier nodes of an expression (not attribute names after '.', not keyword names).
std::vector<Node> Identifiers(const Node& expr);
std::set<std::string> IdentifierNames(const Node& expr);
// `n` without enclosing parentheses.
Node Unparen(Node n);
// Copy of the expression text with identifiers replaced where `fn` returns a value.
std::string SubstituteIdentifiers(const Node& expr,
                                  const std::function<std::optional<std::string>(std::string_view)>& fn);
// The statement (direct child of a block or module) containing `n`.
Node EnclosingStatement(const Node& n);
// The function_definition enclosing a byte offset (null at module level).
Node EnclosingFunction(const Tree& tree, uint32_t byte);

// A simple assignment `name = value` (or augmented `name op= value`).
struct SimpleAssign {
  std::string name;
  Node stmt;
  Node value;
  bool augmented = false;
};
// Simple assignments in `scope` (a function body or the module), nested blocks included, but not
// inside nested function/class definitions; in source order.
std::vector<SimpleAssign> AssignmentsIn(const Node& scope);
// The last assignment to `name` in `scope` before byte `before`; also counts all assignments.
const SimpleAssign* LastAssignBefore(const std::vector<SimpleAssign>& as, std::string_view name,
                                     uint32_t before, int* count = nullptr);

// Whether the expression depends on variable `var`, looking through local assignments of the
// enclosing function (then module), up to `depth` levels.
bool DependsOn(const Tree& tree, const Node& expr, std::string_view var, uint32_t before, int depth = 4);
// Expression text with variable chains inlined where they lead to one of `vars` (each replaced by
// its mapping). Returns nullopt when some dependency cannot be inlined (multiple assignments).
std::optional<std::string> InlineVars(const Tree& tree, const Node& expr,
                                      const std::map<std::string, std::string>& vars, uint32_t before,
                                      int depth = 4,
                                      const std::map<std::string, std::string>* literals = nullptr);
// Like SubstituteIdentifiers over identifiers and integer literals.
std::string SubstituteLeaves(const Node& expr,
                             const std::function<std::optional<std::string>(const Node&)>& fn);

// Edits --------------------------------------------------------------------------------------------
// Appends `kw` ("name=value") to the argument list `args_span` (which includes the parentheses).
Status AppendArg(EditSet& edits, std::string_view text, const Span& args_span, const std::string& kw);
// Removes the arguments at `remove` (indices into `spans`, the argument spans in order).
Status RemoveArgs(EditSet& edits, const std::vector<Span>& spans, const std::vector<bool>& remove);

// Kernel facts ---------------------------------------------------------------------------------------
Node KernelDef(const Tree& tree, const Kernel& k);  // the function_definition node
// Variables derived from tl.program_id in the kernel body (transitively through assignments).
std::set<std::string> PidVars(const Tree& tree, const Kernel& k);
// Constexprs multiplied with a program-id-derived value (tile sizes the grid must follow).
std::set<std::string> TileConstexprs(const Tree& tree, const Kernel& k);
// Constexprs that must be powers of two (tl.arange bounds, tl.zeros/full shapes, block_shape).
std::set<std::string> PowerOfTwoConstexprs(const Tree& tree, const Kernel& k);
// The one pointer parameter an address expression derives from ("" when none or several).
std::string PointerBase(const Tree& tree, const Kernel& k, const Span& pointer);
// Constexprs whose value enters the computed data (not only shapes, offsets, masks and loop bounds):
// a constexpr (or a name computed from constexprs only) combined with a loaded value in arithmetic,
// bitwise ops, comparisons, tl.where / elementwise calls, stored as a value, or passed to a called
// jit function whose parameter is used that way (`x & SIGN_MASK`, `acc / BLOCK`, `tl.where(m, ZERO, y)`).
// Changing one changes the results: not a tunable. Name -> where (for the refusal reason).
std::map<std::string, std::string> ValueConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k);
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
std::map<std::string, DivisorUse> DivisorConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k);
// Constexprs that set the granularity of per-block data the kernel indexes: a pointer is offset by a
// value divided by B (`X // B`, `X / B`, `cdiv(X, B)`), in its own expression or through a variable
// assigned one (attn_fwd_triton: `q_scale_offset = off_hz * tl.cdiv(N_CTX, BLOCK_M)` then
// `Q_scale_ptr = Q_scale + q_scale_offset + start_m`: one quantization scale per BLOCK_M rows). The data
// was laid out for the written value; another value reads other elements. A division whose result is
// itself a divisor (`k // (groupsize // B)`) scales by B and does not count. Name -> where.
std::map<std::string, std::string> BlockIndexConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k);
std::string TlAlias(const ModuleModel& m);
std::string TritonAlias(const ModuleModel& m);

// The text to replace to change launch `l`'s grid: the subscript's contents, including a trailing
// comma (`kernel[n,]` is the grid `(n,)`; replacing only `n` would nest a tuple in it).
Span GridEditSpan(std::string_view text, const Launch& l);
// Whether the grid is a tuple written without parentheses in the subscript (`k[a, b]`, `k[n,]`).
bool GridIsBareTuple(std::string_view text, const Launch& l);

// Launches of the target kernel (indices), resolving an empty list to all of them.
std::vector<int> TargetLaunches(const ModuleModel& m, const Target& t);

// Formats an integer for a tunable (True/False for booleans).
std::string ValueText(int64_t v, bool boolean);

}  // namespace kiln::rewrite::internal
