#include "common/diag.h"

#include <gtest/gtest.h>

#include "common/hash.h"
#include "common/status.h"

namespace kiln {
namespace {

TEST(Diag, FormatsLocationAndCaret) {
  Diagnostic d{Severity::kError, "k.py", 3, 5, "unexpected token", "x = (1 +"};
  EXPECT_EQ(FormatDiagnostic(d), "k.py:3:5: error: unexpected token\n    x = (1 +\n        ^\n");
}

TEST(Diag, NoLocation) {
  Diagnostic d{Severity::kWarning, "k.py", 0, 0, "no kernels", ""};
  EXPECT_EQ(FormatDiagnostic(d), "k.py: warning: no kernels\n");
}

TEST(Diag, LineOf) {
  EXPECT_EQ(LineOf("a\nbb\r\nccc", 2), "bb");
  EXPECT_EQ(LineOf("a\nbb\nccc", 3), "ccc");
  EXPECT_EQ(LineOf("a", 2), "");
}

TEST(Result, ValueAndError) {
  Result<int> r = 4;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 4);
  Result<int> e = NotFound("x");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kNotFound);
}

TEST(Hash, StableAndDistinct) {
  EXPECT_EQ(HashHex("abc"), HashHex("abc"));
  EXPECT_NE(HashHex("abc"), HashHex("abd"));
  EXPECT_EQ(HashHex("abc").size(), 16u);
}

}  // namespace
}  // namespace kiln
