// The optimizer's renderer over the rewrite module: per-shape autotune of a winner and the original.
#include "app/rewrite_renderer.h"

#include "app/prepare_input.h"

#include <gtest/gtest.h>

namespace kiln::app {
namespace {

const char* kPlainAdd = R"(import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)
)";

const char* kAutotunedAdd = R"(import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE': 256}, num_warps=4),
        triton.Config({'BLOCK_SIZE': 512}, num_warps=4),
    ],
    key=['n_elements'],
)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = out.numel()
    add_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)](x, y, out, n)
)";

TEST(Renderer, PerShapeAutotunesWinnerAndOriginal) {
  RewriteRenderer r(kPlainAdd, "add.py", "add_kernel");
  auto s = r.RenderPerShape({{"BLOCK_SIZE", 4096}, {"num_warps", 8}, {"num_stages", 3}},
                            {{"BLOCK_SIZE", 1024}, {"num_warps", 4}, {"num_stages", 3}}, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->find("@triton.autotune("), std::string::npos) << *s;
  EXPECT_NE(s->find("'BLOCK_SIZE': 4096"), std::string::npos) << *s;
  EXPECT_NE(s->find("'BLOCK_SIZE': 1024"), std::string::npos) << *s;
  EXPECT_NE(s->find("key=['n_elements']"), std::string::npos) << *s;
}

TEST(Renderer, PerShapeKeepsAnAutotunedOriginalsConfigs) {
  // The baseline config kiln searched from is one of the original's configs; all of them stay.
  RewriteRenderer r(kAutotunedAdd, "add.py", "add_kernel");
  auto s = r.RenderPerShape({{"BLOCK_SIZE", 2048}, {"num_warps", 8}, {"num_stages", 3}},
                            {{"BLOCK_SIZE", 512}, {"num_warps", 4}, {"num_stages", 3}}, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->find("configs=[triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3)] + (["), std::string::npos)
      << *s;
  EXPECT_NE(s->find("triton.Config({'BLOCK_SIZE': 256}, num_warps=4)"), std::string::npos) << *s;
  EXPECT_NE(s->find("key=['n_elements']"), std::string::npos) << *s;
}

// Shapes kiln measured are pinned (issue 21: an autotune's own benchmark ran rms_rbe_matmul's finalist at
// 0.966x on a size where kiln measured the original's config faster): the autotune prunes by the key's
// values, the winner (first config) or the original's, and the helper is defined once above the kernel.
TEST(Renderer, PerShapePinsMeasuredShapes) {
  search::ShapePins pins;
  pins.names = {"n_elements"};
  pins.shapes = {{nlohmann::json::array({1024}), false}, {nlohmann::json::array({1 << 20}), true}};
  RewriteRenderer plain(kPlainAdd, "add.py", "add_kernel");
  auto s = plain.RenderPerShape({{"BLOCK_SIZE", 4096}, {"num_warps", 8}, {"num_stages", 3}},
                                {{"BLOCK_SIZE", 1024}, {"num_warps", 4}, {"num_stages", 3}}, pins);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->find("    prune_configs_by={\"early_config_prune\": _kiln_pinned((\"n_elements\",), {(1024,): False, "
                    "(1048576,): True})},\n"),
            std::string::npos)
      << *s;
  EXPECT_NE(s->find("def _kiln_pinned(keys, pins):"), std::string::npos) << *s;
  EXPECT_LT(s->find("def _kiln_pinned("), s->find("@triton.autotune(")) << *s;
  EXPECT_NE(s->find("def _kiln_autotune_bench("), std::string::npos) << *s;

  RewriteRenderer tuned(kAutotunedAdd, "add.py", "add_kernel");
  auto t = tuned.RenderPerShape({{"BLOCK_SIZE", 2048}, {"num_warps", 8}, {"num_stages", 3}},
                                {{"BLOCK_SIZE", 512}, {"num_warps", 4}, {"num_stages", 3}}, pins);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_NE(t->find("configs=[triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3)] + (["), std::string::npos)
      << *t;
  EXPECT_NE(t->find("_kiln_pinned((\"n_elements\",), {(1024,): False, (1048576,): True})"), std::string::npos) << *t;
  EXPECT_EQ(t->find("def _kiln_pinned("), t->rfind("def _kiln_pinned(")) << *t;

  // Only numbers are pinned; a value per key name.
  search::ShapePins odd = pins;
  odd.shapes = {{nlohmann::json::array({"torch.float16"}), true}};
  auto bad = plain.RenderPerShape({{"BLOCK_SIZE", 4096}, {"num_warps", 8}, {"num_stages", 3}},
                                  {{"BLOCK_SIZE", 1024}, {"num_warps", 4}, {"num_stages", 3}}, odd);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("is not a number"), std::string::npos) << bad.status().message();
  odd.shapes = {{nlohmann::json::array({1, 2}), true}};
  EXPECT_FALSE(plain.RenderPerShape({{"BLOCK_SIZE", 4096}}, {{"BLOCK_SIZE", 1024}}, odd).ok());
}

// The streaming-load hint searched as a value (issue 21): kiln_evict_first=1 renders the values and the
// hint on the loads each program reads once; 0 renders the values alone. (Golden: the whole module.)
TEST(Renderer, EvictFirstKnobRendersTheHintWithTheValues) {
  RewriteRenderer r(kPlainAdd, "add.py", "add_kernel");
  auto on = r.Render({{"BLOCK_SIZE", 2048}, {"kiln_evict_first", 1}, {"num_warps", 8}});
  ASSERT_TRUE(on.ok()) << on.status().message();
  EXPECT_EQ(*on, R"(import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, eviction_policy='evict_first') + tl.load(y_ptr + offs, mask=mask, eviction_policy='evict_first'), mask=mask)


def add(x, y, out):
    n = out.numel()
    add_kernel[(triton.cdiv(n, 2048),)](x, y, out, n, BLOCK_SIZE=2048, num_warps=8)
)");
  auto off = r.Render({{"BLOCK_SIZE", 2048}, {"kiln_evict_first", 0}, {"num_warps", 8}});
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(off->find("eviction_policy"), std::string::npos) << *off;
  EXPECT_NE(off->find("BLOCK_SIZE=2048, num_warps=8"), std::string::npos) << *off;
}

// One autotuned module holds configs of either hint: with the hint for all, it is applied once and the
// knob is no autotune parameter; configs that differ in it switch it by a constexpr each config sets
// (max_reduction on an H200: its 22x finalist without the hint's 0.72x on a 7 us size had no per-shape
// autotune while one module could hold only one hint).
TEST(Renderer, AutotuneOverTheEvictFirstKnob) {
  RewriteRenderer r(kPlainAdd, "add.py", "add_kernel");
  auto both = r.RenderAutotune({{{"BLOCK_SIZE", 2048}, {"kiln_evict_first", 1}, {"num_warps", 8}},
                                {{"BLOCK_SIZE", 1024}, {"kiln_evict_first", 1}, {"num_warps", 4}}});
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_NE(both->find("@triton.autotune("), std::string::npos) << *both;
  EXPECT_NE(both->find("eviction_policy='evict_first')"), std::string::npos) << *both;
  EXPECT_EQ(both->find("'kiln_evict_first'"), std::string::npos) << *both;
  EXPECT_EQ(both->find("KILN_EVICT_FIRST"), std::string::npos) << *both;
  auto mixed = r.RenderPerShape({{"BLOCK_SIZE", 2048}, {"kiln_evict_first", 1}, {"num_warps", 8}},
                                {{"BLOCK_SIZE", 1024}, {"kiln_evict_first", 0}, {"num_warps", 4}}, {});
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  EXPECT_NE(mixed->find("KILN_EVICT_FIRST: tl.constexpr = 0)"), std::string::npos) << *mixed;
  EXPECT_NE(mixed->find("eviction_policy='evict_first' if KILN_EVICT_FIRST else ''"), std::string::npos) << *mixed;
  EXPECT_NE(mixed->find("triton.Config({'BLOCK_SIZE': 2048, 'KILN_EVICT_FIRST': 1}, num_warps=8"), std::string::npos)
      << *mixed;
  EXPECT_NE(mixed->find("triton.Config({'BLOCK_SIZE': 1024, 'KILN_EVICT_FIRST': 0}, num_warps=4"), std::string::npos)
      << *mixed;
  EXPECT_EQ(mixed->find("'kiln_evict_first'"), std::string::npos) << *mixed;
  // An autotuned original keeps its configs (the switch's default 0 is their loads) and gains the winner.
  RewriteRenderer a(kAutotunedAdd, "add.py", "add_kernel");
  auto ext = a.RenderPerShape({{"BLOCK_SIZE", 2048}, {"kiln_evict_first", 1}, {"num_warps", 8}},
                              {{"BLOCK_SIZE", 256}, {"kiln_evict_first", 0}, {"num_warps", 4}}, {});
  ASSERT_TRUE(ext.ok()) << ext.status().message();
  EXPECT_NE(ext->find("triton.Config({'BLOCK_SIZE': 2048, 'KILN_EVICT_FIRST': 1}, num_warps=8"), std::string::npos)
      << *ext;
  EXPECT_NE(ext->find("triton.Config({'BLOCK_SIZE': 512}, num_warps=4)"), std::string::npos) << *ext;
  EXPECT_NE(ext->find("if KILN_EVICT_FIRST else ''"), std::string::npos) << *ext;
}

const char* kDotKernel = R"(import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], tl.dot(a, b))


def mm(a, b, c):
    mm_kernel[(1,)](a, b, c, BLOCK=32)
)";

// The knob is in the space (at 0, the original's loads) where the hint applies, with a note; a product's
// tiles are re-read through L2 by other programs, so a kernel with tl.dot keeps its loads as they are.
TEST(Renderer, EvictFirstKnobOnlyWhereTheHintApplies) {
  task::TaskSpec spec;
  spec.format = task::Format::kKiln;
  auto add = PrepareInputFromSource(spec, kPlainAdd, "add.py", "", {});
  ASSERT_TRUE(add.ok()) << add.status().message();
  const search::Param* p = add->space.Find(search::kEvictFirstParam);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->values, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(add->baseline.at(search::kEvictFirstParam), 0);
  bool noted = false;
  for (const auto& n : add->notes) noted |= n.rfind("searched: kiln_evict_first", 0) == 0;
  EXPECT_TRUE(noted);
  auto mm = PrepareInputFromSource(spec, kDotKernel, "mm.py", "", {});
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  EXPECT_EQ(mm->space.Find(search::kEvictFirstParam), nullptr);
  EXPECT_FALSE(mm->space.empty());
}

}  // namespace
}  // namespace kiln::app
