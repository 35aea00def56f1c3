// Tunables (analysis/tunables.h) on the small tutorial-style kernels of the rewrite tests.
#include "analysis/tunables.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/file.h"
#include "common/status.h"
#include "pyast/pyast.h"

namespace kiln::analysis {
namespace {

struct Parsed {
  std::unique_ptr<pyast::Tree> tree;
  ModuleModel model;
};

Parsed Parse(const std::string& file) {
  std::string path = std::string(KILN_SOURCE_DIR) + "/tests/rewrite/" + file;
  auto t = pyast::Tree::ParseFile(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  auto m = AnalyzeModule(**t);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return {std::move(*t), std::move(*m)};
}

// The tunables of `kernel` in the module source `src`.
Result<Tunables> TunablesOf(const std::string& src, const std::string& kernel) {
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(src, "t.py"));
  KILN_ASSIGN_OR_RETURN(ModuleModel model, AnalyzeModule(*tree));
  return ExtractTunables(*tree, model, Target{kernel, {}});
}

TEST(Tunables, VectorAddVariableAndGrid) {
  auto p = Parse("cases/vector_add_var.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"add_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Tunable* b = t->Find("BLOCK_SIZE");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->site, TunableSite::kVariable);
  EXPECT_EQ(b->value, 128);
  EXPECT_TRUE(b->editable);
  EXPECT_TRUE(b->power_of_two);
  EXPECT_TRUE(b->in_grid);
  EXPECT_TRUE(b->grid_follows);
  EXPECT_EQ(b->role, TunableRole::kBlock);
  const Tunable* w = t->Find("num_warps");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->site, TunableSite::kLaunchLiteral);
  EXPECT_EQ(w->value, 4);
  const Tunable* s = t->Find("num_stages");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->site, TunableSite::kOptionDefault);
  EXPECT_EQ(s->value, 3);
}

// The tiles a block is a side of (TileShapes): tl.zeros / tl.full shapes and block_shape, whose sides are constexprs
// or integer literals; a side kiln cannot evaluate records no tile.
TEST(Tunables, TheTilesABlockIsASideOf) {
  const char* src = R"(import torch
import triton
import triton.language as tl

@triton.jit
def rec(q, o, T, K: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr, BT: tl.constexpr, BH: tl.constexpr):
    b_h = tl.zeros([BV, BK], dtype=tl.float32)
    b_s = tl.full((BT, 16), 0.0, tl.float32)
    b_c = tl.zeros([BH, BH // 2], dtype=tl.float32)
    b_r = tl.zeros([BH], dtype=tl.float32)
    p = tl.make_block_ptr(q, (T, K), (K, 1), (0, 0), block_shape=(BT, BK), order=(1, 0))
    tl.store(o + tl.arange(0, BV), tl.sum(b_h, axis=1))

def run(q, o):
    rec[(1,)](q, o, 8, K=64, BK=32, BV=32, BT=16, BH=16)
)";
  auto t = TunablesOf(src, "rec");
  ASSERT_TRUE(t.ok()) << t.status().message();
  using Tiles = std::vector<std::vector<std::string>>;
  EXPECT_EQ(t->Find("BV")->tiles, (Tiles{{"BV", "BK"}}));
  EXPECT_EQ(t->Find("BK")->tiles, (Tiles{{"BV", "BK"}, {"BT", "BK"}}));
  EXPECT_EQ(t->Find("BT")->tiles, (Tiles{{"BT", "16"}, {"BT", "BK"}}));
  EXPECT_TRUE(t->Find("BH")->tiles.empty());  // `BH // 2` is not evaluated; a 1-D shape is not a tile
  EXPECT_TRUE(t->Find("num_warps")->tiles.empty());
}

// Two ranges broadcast against each other in one statement make a tile (index_select_bwd: `rows[:, None] * stride0
// + cols[None, :]`), through variables assigned once; ranges over one constexpr each.
TEST(Tunables, BroadcastRangesMakeATile) {
  const char* src = R"(import triton
import triton.language as tl

@triton.jit
def scatter(src, idx, out, n, m, s0, BLOCK_I: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_X: tl.constexpr):
    pid0 = tl.program_id(0)
    rows = pid0 * BLOCK_I + tl.arange(0, BLOCK_I)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n) & (cols[None, :] < m)
    g = tl.load(src + rows[:, None] * s0 + cols[None, :], mask=mask)
    xs = tl.arange(0, BLOCK_X)
    xs = xs + 1
    tl.store(out + xs[:, None] + cols[None, :], g)
    tl.store(out + tl.arange(0, BLOCK_C)[None, :], tl.sum(g, axis=0))

def run(src, idx, out):
    scatter[(4, 4)](src, idx, out, 8, 8, 8, BLOCK_I=16, BLOCK_C=64, BLOCK_X=16)
)";
  auto t = TunablesOf(src, "scatter");
  ASSERT_TRUE(t.ok()) << t.status().message();
  using Tiles = std::vector<std::vector<std::string>>;
  EXPECT_EQ(t->Find("BLOCK_I")->tiles, (Tiles{{"BLOCK_I", "BLOCK_C"}}));
  EXPECT_EQ(t->Find("BLOCK_C")->tiles, (Tiles{{"BLOCK_I", "BLOCK_C"}}));
  EXPECT_TRUE(t->Find("BLOCK_X")->tiles.empty());  // `xs` is assigned twice: not followed
}

TEST(Tunables, ComputedIsNotEditable) {
  auto p = Parse("cases/softmax.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"softmax_kernel", {}});
  ASSERT_TRUE(t.ok());
  const Tunable* b = t->Find("BLOCK_SIZE");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->editable);
  EXPECT_NE(b->reason.find("computed"), std::string::npos) << b->reason;
  EXPECT_TRUE(t->Find("num_warps")->editable);
}

TEST(Tunables, AutotuneValues) {
  auto p = Parse("cases/matmul_autotuned.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"matmul_kernel", {}});
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->autotuned);
  const Tunable* m = t->Find("BLOCK_SIZE_M");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->site, TunableSite::kAutotune);
  EXPECT_EQ(m->autotune_values, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(m->autotune_first, 32);  // the first config's, where a search starts
  EXPECT_EQ(t->Find("num_stages")->autotune_first, 3);
  EXPECT_EQ(t->Find("GROUP_SIZE_M")->role, TunableRole::kOther);
  EXPECT_EQ(t->Find("num_warps")->role, TunableRole::kLaunchOption);
  EXPECT_EQ(t->Find("num_stages")->autotune_values, (std::vector<int64_t>{3, 4}));
}

TEST(Tunables, UnknownKernel) {
  auto p = Parse("cases/vector_add.py");
  EXPECT_FALSE(ExtractTunables(*p.tree, p.model, Target{"nope", {}}).ok());
}

TEST(Tunables, LaunchOptionNames) {
  EXPECT_TRUE(IsLaunchOption("num_warps"));
  EXPECT_TRUE(IsLaunchOption("maxnreg"));
  EXPECT_FALSE(IsLaunchOption("BLOCK"));
}

// Hidden knobs (issue 21): a wrapper's parameter rebound, a computed launch option overridden; a caller's
// value that also sizes an output, and a computed block covering a row in one piece, stay fixed.
TEST(Tunables, HiddenCallerParam) {
  auto p = Parse("cases/hidden_param.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"scale_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Tunable* b = t->Find("BLOCK");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->site, TunableSite::kParamRebind);
  EXPECT_TRUE(b->editable) << b->reason;
  EXPECT_FALSE(b->value.has_value());  // known only at run time
  EXPECT_TRUE(b->grid_follows);
  const Tunable* w = t->Find("num_warps");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->site, TunableSite::kLaunchOverride);
  EXPECT_TRUE(w->editable);
  auto q = ExtractTunables(*p.tree, p.model, Target{"partial_kernel", {}});
  ASSERT_TRUE(q.ok());
  const Tunable* pb = q->Find("BLOCK");
  ASSERT_NE(pb, nullptr);
  EXPECT_FALSE(pb->editable);
  EXPECT_NE(pb->reason.find("the caller relies on it"), std::string::npos) << pb->reason;
}

TEST(Tunables, HiddenComputed) {
  auto p = Parse("cases/hidden_computed.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"rowsum_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Tunable* b = t->Find("BLOCK");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->site, TunableSite::kAssignOverride);
  EXPECT_TRUE(b->editable) << b->reason;
  EXPECT_EQ(t->Find("num_stages")->site, TunableSite::kLaunchOverride);
  auto m = ExtractTunables(*p.tree, p.model, Target{"rowmax_kernel", {}});
  ASSERT_TRUE(m.ok());
  const Tunable* mb = m->Find("BLOCK");
  ASSERT_NE(mb, nullptr);
  EXPECT_FALSE(mb->editable);
  EXPECT_NE(mb->reason.find("covers its extent in one block"), std::string::npos) << mb->reason;
}

// Tuple assignments (issue 21): `i_v, i_k, i_b = tl.program_id(0), ...` in the kernel and
// `BK, BV = min(K, 32), min(V, 32)` / `NK, NV = cdiv(K, BK), cdiv(V, BV)` in the wrapper.
TEST(Tunables, HiddenUnpacked) {
  auto p = Parse("cases/hidden_unpacked.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"decay_scan_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Tunable* bv = t->Find("BV");  // stepped by an unpacked program id; NV feeds the grid only
  ASSERT_NE(bv, nullptr);
  EXPECT_EQ(bv->site, TunableSite::kAssignOverride);
  EXPECT_TRUE(bv->editable) << bv->reason;
  EXPECT_TRUE(bv->grid_follows);
  const Tunable* bk = t->Find("BK");  // NK sizes the partial outputs: the caller relies on it
  ASSERT_NE(bk, nullptr);
  EXPECT_FALSE(bk->editable);
  EXPECT_NE(bk->reason.find("the caller relies on it"), std::string::npos) << bk->reason;
  auto c = ExtractTunables(*p.tree, p.model, Target{"colmax_kernel", {}});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->Find("BLOCK")->editable);
  EXPECT_NE(c->Find("BLOCK")->reason.find("covers its extent in one block"), std::string::npos);
  auto s = ExtractTunables(*p.tree, p.model, Target{"chunk_sum_kernel", {}});
  ASSERT_TRUE(s.ok());
  const Tunable* bt = s->Find("BT");  // its block number indexes the per-chunk sums
  ASSERT_NE(bt, nullptr);
  EXPECT_FALSE(bt->editable);
  EXPECT_NE(bt->reason.find("offsets a pointer by the block number i_t it steps"), std::string::npos) << bt->reason;
}

// A value loaded through a pointer is data, not a pointer (issue 21): context_attn_bloom's causal loop
// bound `(start_m + 1) * BLOCK_M + prompt_cache_len`, the length loaded from `b_prompt_cache_len`, kept
// BLOCK_M fixed as "offsets a pointer by the block number". The control: a block number that does offset
// a pointer (one scale per block) keeps its block size fixed.
TEST(Tunables, LoadedValueIsNotAPointer) {
  auto p = Parse("cases/causal_block_end.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"causal_rowsum_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Tunable* m = t->Find("BLOCK_M");
  const Tunable* n = t->Find("BLOCK_N");
  ASSERT_TRUE(m && n);
  EXPECT_TRUE(m->editable) << m->reason;
  EXPECT_TRUE(m->grid_follows);
  EXPECT_TRUE(n->editable) << n->reason;
  auto c = ExtractTunables(*p.tree, p.model, Target{"block_scale_kernel", {}});
  ASSERT_TRUE(c.ok());
  const Tunable* b = c->Find("BLOCK");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->editable);
  EXPECT_NE(b->reason.find("offsets a pointer by the block number pid it steps"), std::string::npos) << b->reason;
}

// One host variable sets BLOCK_M and BLOCK_N (attention wrappers): BLOCK_M, which the grid follows, owns
// it; BLOCK_N is set at the launch. A variable that also sizes a buffer, or two tile sizes both stepped by
// program ids, stay fixed (issue 21).
TEST(Tunables, SharedVariableHasOneOwner) {
  auto p = Parse("cases/shared_block_var.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"tile_rowsum_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const Tunable* m = t->Find("BLOCK_M");
  const Tunable* n = t->Find("BLOCK_N");
  ASSERT_TRUE(m && n);
  EXPECT_TRUE(m->editable) << m->reason;
  EXPECT_EQ(m->site, TunableSite::kVariable);
  EXPECT_TRUE(m->grid_follows);
  EXPECT_EQ(m->pinned_siblings, std::vector<std::string>{"BLOCK_N"});
  EXPECT_TRUE(n->editable) << n->reason;
  EXPECT_EQ(n->site, TunableSite::kLaunchOverride);
  EXPECT_EQ(n->shares_owner, "BLOCK_M");
  EXPECT_EQ(n->value, 16);
  EXPECT_FALSE(n->in_grid);

  auto d = ExtractTunables(*p.tree, p.model, Target{"tile_rowmax_kernel", {}});  // BLOCK_N = BLOCK_M
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Find("BLOCK_M")->site, TunableSite::kAssignOverride);
  EXPECT_EQ(d->Find("BLOCK_M")->pinned_siblings, std::vector<std::string>{"BLOCK_N"});
  EXPECT_EQ(d->Find("BLOCK_N")->site, TunableSite::kAssignOverride);
  EXPECT_TRUE(d->Find("BLOCK_N")->shares_owner.empty());

  auto b = ExtractTunables(*p.tree, p.model, Target{"tile_rowmin_kernel", {}});
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->Find("BLOCK_M")->editable);
  EXPECT_FALSE(b->Find("BLOCK_N")->editable);
  EXPECT_NE(b->Find("BLOCK_N")->reason.find("also read by other host code"), std::string::npos);

  auto both = ExtractTunables(*p.tree, p.model, Target{"tile_both_kernel", {}});
  ASSERT_TRUE(both.ok());
  EXPECT_FALSE(both->Find("BLOCK_M")->editable);
  EXPECT_FALSE(both->Find("BLOCK_N")->editable);
  EXPECT_NE(both->Find("BLOCK_M")->reason.find("both used with the program id"), std::string::npos);
}

// An assert that guards the tile sizes (`assert BLOCK_M % BLOCK_N == 0`) is not another reader: both stay
// tunable at their tuple assignment; a condition that picks a code path (`if M < BLOCK_M`) is one.
TEST(Tunables, AnAssertGuardIsNotAnotherReader) {
  auto p = Parse("cases/assert_guarded_tiles.py");
  auto t = ExtractTunables(*p.tree, p.model, Target{"rowsum_kernel", {}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (const char* n : {"BLOCK_M", "BLOCK_N"}) {
    const Tunable* b = t->Find(n);
    ASSERT_NE(b, nullptr) << n;
    EXPECT_TRUE(b->editable) << n << ": " << b->reason;
    EXPECT_EQ(b->site, TunableSite::kVariable) << n;
  }
  EXPECT_EQ(t->Find("BLOCK_M")->value, 16);
  EXPECT_TRUE(t->Find("BLOCK_M")->grid_follows);
  auto br = ExtractTunables(*p.tree, p.model, Target{"rowsum_branch_kernel", {}});
  ASSERT_TRUE(br.ok());
  EXPECT_FALSE(br->Find("BLOCK_M")->editable);
  EXPECT_NE(br->Find("BLOCK_M")->reason.find("line 46: if M < BLOCK_M"), std::string::npos)
      << br->Find("BLOCK_M")->reason;
}

}  // namespace
}  // namespace kiln::analysis
