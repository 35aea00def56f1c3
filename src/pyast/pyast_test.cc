#include "pyast/pyast.h"

#include <gtest/gtest.h>

namespace kiln::pyast {
namespace {

TEST(Pyast, ParsesAndSpans) {
  auto t = Tree::Parse("import triton\n\n@triton.jit\ndef k(x):\n    pass\n", "k.py");
  ASSERT_TRUE(t.ok());
  Node root = (*t)->root();
  EXPECT_EQ(root.type(), "module");
  EXPECT_FALSE((*t)->has_errors());
  Node dec = root.named_child(1);
  EXPECT_EQ(dec.type(), "decorated_definition");
  Node def = dec.field("definition");
  EXPECT_EQ(def.field("name").text(), "k");
  Span s = def.field("name").span();
  EXPECT_EQ(s.begin.line, 4u);
  EXPECT_EQ(s.begin.column, 5u);
  EXPECT_EQ(def.parent(), dec);
}

TEST(Pyast, ReportsSyntaxErrorLocation) {
  auto t = Tree::Parse("def f(:\n    return 1\n", "bad.py");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE((*t)->has_errors());
  auto errs = (*t)->errors();
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].span.begin.line, 1u);
  std::string d = FormatDiagnostic((*t)->MakeDiagnostic(errs[0].span, errs[0].message));
  EXPECT_NE(d.find("bad.py:1:"), std::string::npos) << d;
  EXPECT_NE(d.find("error: syntax error"), std::string::npos) << d;
}

TEST(Pyast, MissingTokenReported) {
  auto t = Tree::Parse("x = (1 + 2\n", "m.py");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE((*t)->errors().empty());
}

TEST(Pyast, EditsApplyAndReparse) {
  auto t = Tree::Parse("f(BLOCK=128, num_warps=4)\n");
  ASSERT_TRUE(t.ok());
  EditSet e;
  std::string_view text = (*t)->text();
  uint32_t b = static_cast<uint32_t>(text.find("128"));
  ASSERT_TRUE(e.Replace(b, b + 3, "256").ok());
  uint32_t w = static_cast<uint32_t>(text.find("4)"));
  ASSERT_TRUE(e.Replace(w, w + 1, "8").ok());
  EXPECT_FALSE(e.Replace(b + 1, b + 2, "x").ok());  // overlaps
  auto out = e.ApplyAndParse(**t);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)->text(), "f(BLOCK=256, num_warps=8)\n");
}

TEST(Pyast, EditThatBreaksSyntaxFails) {
  auto t = Tree::Parse("f(1)\n");
  ASSERT_TRUE(t.ok());
  EditSet e;
  ASSERT_TRUE(e.Replace(3, 4, "").ok());
  EXPECT_FALSE(e.ApplyAndParse(**t).ok());
}

TEST(Pyast, StringLiteral) {
  auto t = Tree::Parse("x = 'evict_first'\n");
  ASSERT_TRUE(t.ok());
  Node s = (*t)->root().named_child(0).named_child(0).field("right");
  EXPECT_EQ(StringLiteralValue(s), "evict_first");
}

}  // namespace
}  // namespace kiln::pyast
