// The response module: the format rules of raw model responses and the Triton gate (serve, bench, generate).
#include <gtest/gtest.h>

#include "response/extract.h"

namespace kiln::response {
namespace {

TEST(Extract, KernelBenchAnswerWithProseAndTwoBlocks) {
  std::string r =
      "Here is the plan.\n```python\nimport torch\nx = 1\n```\nThe solution:\n```python\nimport triton\n"
      "@triton.jit\ndef k(p):\n    pass\nclass ModelNew:\n    pass\n```\nDone.\n";
  Extracted e = ExtractCode(r);
  ASSERT_TRUE(e.has_code);
  EXPECT_TRUE(e.format_ok);
  EXPECT_NE(e.code.find("class ModelNew"), std::string::npos);
  EXPECT_EQ(e.code.find("x = 1"), std::string::npos);
}

TEST(Extract, ProseOnlyHasNoCode) {
  Extracted e = ExtractCode("Sorry, I cannot help with that kernel.");
  EXPECT_FALSE(e.has_code);
  EXPECT_EQ(e.how, "none");
}

const char* kKernel =
    "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    pass\n"
    "def run(x):\n    k[(1,)](x, BLOCK=4)\n";

TEST(Extract, FencedPythonBlockAfterThinking) {
  std::string r = std::string("<think>maybe ```python\nimport os\n```</think>Answer:\n```python\n") + kKernel + "```\n";
  Extracted e = ExtractCode(r);
  EXPECT_TRUE(e.has_code);
  EXPECT_TRUE(e.format_ok);
  EXPECT_EQ(e.how, "fenced");
  EXPECT_EQ(e.code, kKernel);
}

TEST(Extract, PrefersTheLastBlockWithAKernel) {
  std::string r = std::string("```python\n") + kKernel + "```\nUsage:\n```python\nrun(x)\n```\n```bash\nls\n```\n";
  Extracted e = ExtractCode(r);
  EXPECT_EQ(e.code, kKernel);
  Extracted none = ExtractCode("```bash\nls\n```\n");  // no Python block, and fences: no code
  EXPECT_FALSE(none.has_code);
  EXPECT_EQ(none.how, "none");
}

TEST(Extract, UnterminatedUnfencedAndNothing) {
  Extracted open = ExtractCode(std::string("```py\n") + kKernel);
  EXPECT_TRUE(open.has_code);
  EXPECT_FALSE(open.format_ok);
  EXPECT_EQ(open.how, "unterminated_fence");
  Extracted bare = ExtractCode(kKernel);
  EXPECT_TRUE(bare.has_code);
  EXPECT_FALSE(bare.format_ok);
  EXPECT_EQ(bare.how, "unfenced");
  EXPECT_FALSE(ExtractCode("I cannot write this kernel.").has_code);
  EXPECT_FALSE(ExtractCode(std::string("<think>") + kKernel).has_code);  // unclosed thinking hides the rest
}

TEST(Gate, NeedsALaunchedJitFunction) {
  EXPECT_TRUE(TritonGate(kKernel).pass);
  EXPECT_FALSE(TritonGate("import torch\ndef f(x):\n    return x.relu()\n").pass);
  Gate decoy = TritonGate("import triton\n@triton.jit\ndef k(x):\n    pass\ndef f(x):\n    return x.relu()\n");
  EXPECT_FALSE(decoy.pass);
  EXPECT_NE(decoy.reason.find("launched"), std::string::npos);
  EXPECT_TRUE(TritonGate("@triton.autotune(configs=[])\n@triton.jit\ndef k2(x):\n    pass\nk2[g](x)\n").pass);
}

}  // namespace
}  // namespace kiln::response
