#include "exec/race_probe.h"

#include <gtest/gtest.h>

namespace kiln::exec {
namespace {

constexpr const char* kCopy = R"(import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["n"])
@triton.jit
def scatter_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    row = tl.program_id(1)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    dest = tl.load(idx_ptr + offs, mask=offs < n)
    tl.store(out_ptr + dest, tl.load(x_ptr + offs, mask=offs < n) + row, mask=offs < n)


def scatter(x, idx, out):
    pid = 3  # host code is left alone
    scatter_kernel[(1, 1)](x, idx, out, x.numel(), BLOCK=64)
)";

TEST(RaceProbe, ProgramIdsOfJitFunctionsAreReversed) {
  RaceProbe p = ReversedProgramOrder(kCopy);
  ASSERT_TRUE(p.source) << p.why;
  EXPECT_NE(p.source->find("pid = (tl.num_programs(axis=0) - 1 - tl.program_id(axis=0))"), std::string::npos)
      << *p.source;
  EXPECT_NE(p.source->find("row = (tl.num_programs(1) - 1 - tl.program_id(1))"), std::string::npos) << *p.source;
  EXPECT_NE(p.source->find("    pid = 3  # host code is left alone"), std::string::npos);
  // everything else unchanged
  std::string back = *p.source;
  for (auto [from, to] : {std::pair<std::string, std::string>{"(tl.num_programs(axis=0) - 1 - tl.program_id(axis=0))",
                                                              "tl.program_id(axis=0)"},
                          {"(tl.num_programs(1) - 1 - tl.program_id(1))", "tl.program_id(1)"}})
    back.replace(back.find(from), from.size(), to);
  EXPECT_EQ(back, kCopy);
}

TEST(RaceProbe, RefusedWhereProgramsMayWaitOnOneAnother) {
  const std::string head =
      "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(f, x):\n"
      "    pid = tl.program_id(0)\n";
  struct Case {
    std::string body, why;
  } cases[] = {
      {"    while tl.atomic_add(f, 0) < pid:\n        pass\n", "while loop at line 8"},
      {"    tl.atomic_cas(f + pid, 0, 1)\n", "calls atomic_cas at line 8"},
      {"    tl.atomic_xchg(f + pid, 1)\n", "calls atomic_xchg"},
      {"    v = tl.load(f + pid - 1, volatile=True)\n", "volatile load at line 8"},
  };
  for (const auto& c : cases) {
    RaceProbe p = ReversedProgramOrder(head + c.body);
    EXPECT_FALSE(p.source) << c.body;
    EXPECT_NE(p.why.find(c.why), std::string::npos) << p.why;
  }
  EXPECT_TRUE(ReversedProgramOrder(head + "    tl.load(f + pid, volatile=False)\n").source);
}

TEST(RaceProbe, NothingToReverse) {
  EXPECT_EQ(ReversedProgramOrder("import torch\n\ndef f(x):\n    return x + 1\n").why, "no @triton.jit function");
  EXPECT_EQ(ReversedProgramOrder("import triton\n\n@triton.jit\ndef k(x):\n    pass\n").why, "no program_id call");
  EXPECT_NE(ReversedProgramOrder("from triton.language import program_id\nimport triton\n\n@triton.jit\ndef k(x):\n"
                                 "    p = program_id(0)\n")
                .why.find("without its module"),
            std::string::npos);
  EXPECT_EQ(ReversedProgramOrder("def (:\n").why, "the module has syntax errors");
}

}  // namespace
}  // namespace kiln::exec
