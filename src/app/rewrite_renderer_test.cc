// The optimizer's renderer over the rewrite module: per-shape autotune of a winner and the original.
#include "app/rewrite_renderer.h"

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
                            {{"BLOCK_SIZE", 1024}, {"num_warps", 4}, {"num_stages", 3}});
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
                            {{"BLOCK_SIZE", 512}, {"num_warps", 4}, {"num_stages", 3}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->find("configs=[triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3)] + (["), std::string::npos)
      << *s;
  EXPECT_NE(s->find("triton.Config({'BLOCK_SIZE': 256}, num_warps=4)"), std::string::npos) << *s;
  EXPECT_NE(s->find("key=['n_elements']"), std::string::npos) << *s;
}

}  // namespace
}  // namespace kiln::app
