// The response module's extraction as `kiln bench` uses it (serve's format tests: src/serve/serve_test.cc).
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

}  // namespace
}  // namespace kiln::response
