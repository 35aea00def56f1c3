// The response module: the format rules of raw model responses and the Triton gate (serve, bench, generate).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

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

// A model's degenerate output (30 KB of spaces, 100000 decorator lines) once overflowed the stack of
// std::regex's recursive executor and killed `kiln serve`: the scans are linear and iterative now.
TEST(Gate, LongDegenerateResponsesAreJudgedNotFatal) {
  const size_t n = 1 << 20;
  EXPECT_EQ(ExtractCode("hello\n" + std::string(n, ' ') + "x").how, "none");
  Extracted imp = ExtractCode(std::string(n, '\n') + "   import torch\n");
  EXPECT_EQ(imp.how, "unfenced");
  EXPECT_FALSE(TritonGate("@triton.jit" + std::string(n, 'a')).pass);
  std::string decos = "@triton.jit\n";
  for (int i = 0; i < 100000; ++i) decos += "@x\n";
  EXPECT_TRUE(TritonGate(decos + "def k(x):\n    pass\nk" + std::string(n, ' ') + "[g](x)\n").pass);
  EXPECT_FALSE(TritonGate(decos + std::string(n, ' ')).pass);
}

// The scans answer what the regular expressions they replaced answered (checked on small random texts
// over the tokens that matter, where std::regex is safe).
TEST(Gate, ScansAgreeWithTheRegularExpressions) {
  const std::regex jit(R"(@triton\.jit[^\n]*\n(\s*@[^\n]*\n)*\s*def\s+(\w+))");
  const std::regex import(R"((^|\n)\s*(import|from)\s+\w)");
  const char* tokens[] = {"@triton.jit", "@x", "\n", " ", "\t", "def", "k", "k2", "(x)", "[", "]", "g",
                          "import", "from", "os", ":", "pass", "_k", "#"};
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  // half the texts start from a kernel and its launch, then get tokens spliced in
  const char* base = "@triton.jit\n@x\ndef k(x):\n  pass\nk[g](x)\n";
  int passed = 0, unfenced = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string s = trial % 2 ? base : "";
    size_t len = next() % 14;
    for (size_t i = 0; i < len; ++i)
      s.insert(s.empty() ? 0 : next() % (s.size() + 1), tokens[next() % (sizeof(tokens) / sizeof(tokens[0]))]);
    std::vector<std::string> names;
    for (auto it = std::sregex_iterator(s.begin(), s.end(), jit); it != std::sregex_iterator(); ++it)
      names.push_back((*it)[2]);
    bool launched = false;
    for (const auto& k : names)
      launched = launched || std::regex_search(s, std::regex("\\b" + k + R"(\s*\[)"));
    Gate g = TritonGate(s);
    ASSERT_EQ(g.pass, launched) << "[" << s << "]";
    passed += g.pass;
    if (!g.pass) ASSERT_EQ(g.reason.find("no @triton.jit function") == 0 && names.empty(), names.empty()) << s;
    if (s.find("```") == std::string::npos && s.find("@triton.jit") == std::string::npos)
      ASSERT_EQ(ExtractCode(s).how == "unfenced", std::regex_search(s, import)) << "[" << s << "]";
    if (s.find("@triton.jit") == std::string::npos) unfenced += ExtractCode(s).how == "unfenced";
  }
  EXPECT_GT(passed, 2000);  // both answers are exercised
  EXPECT_LT(passed, 18000);
  EXPECT_GT(unfenced, 100);
}

}  // namespace
}  // namespace kiln::response
