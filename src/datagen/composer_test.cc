#include "datagen/composer.h"

#include <regex>
#include <set>

#include <gtest/gtest.h>

namespace kiln::datagen {
namespace {

TEST(Composer, SameSeedSameProgramOtherSeedOther) {
  ComposedProgram a = Compose(7, 3), b = Compose(7, 3), c = Compose(8, 3);
  EXPECT_EQ(a.source, b.source);
  EXPECT_NE(a.source, c.source);
  EXPECT_EQ(a.name, "comp_7_00003");
}

TEST(Composer, ProgramsHaveTheKernelBenchShape) {
  for (int i = 0; i < 200; ++i) {
    ComposedProgram p = Compose(1, i);
    EXPECT_NE(p.source.find("class Model(nn.Module):"), std::string::npos) << p.source;
    EXPECT_NE(p.source.find("def get_inputs():"), std::string::npos);
    EXPECT_NE(p.source.find("def get_init_inputs():"), std::string::npos);
    EXPECT_GE(p.ops.size(), 1u);
    EXPECT_LE(p.ops.size(), 5u);
    EXPECT_FALSE(p.families.empty());
  }
}

TEST(Composer, EveryFamilyAndMostOperatorsAreDrawn) {
  std::set<std::string> families, ops;
  for (int i = 0; i < 500; ++i) {
    ComposedProgram p = Compose(2, i);
    families.insert(p.families.begin(), p.families.end());
    ops.insert(p.ops.begin(), p.ops.end());
  }
  EXPECT_EQ(families.size(), std::size(kFamilies));
  // rank-3-only and shape-guarded operators are rarer; still most of the vocabulary shows up
  EXPECT_GT(ops.size(), Vocabulary().size() * 9 / 10);
}

TEST(Composer, SmallShapesStaySmall) {
  ComposeOptions o;
  o.small = true;
  for (int i = 0; i < 50; ++i) {
    ComposedProgram p = Compose(3, i, o);
    EXPECT_EQ(p.source.find("= 1024"), std::string::npos) << p.source;
    EXPECT_EQ(p.source.find("= 2048"), std::string::npos) << p.source;
  }
}

// Verification at other batch sizes (--shapes) sets batch_size: every input must follow it (an extra input of
// the captured batch as a literal made the eager program fail at any other).
TEST(Composer, ExtraInputsFollowTheBatchSize) {
  static const std::regex kExtra(R"(\n    (y[0-9]+) = torch\.randn\(([^)]*)\))");
  int extras = 0;
  for (int i = 0; i < 300; ++i) {
    ComposedProgram p = Compose(4, i);
    for (std::sregex_iterator it(p.source.begin(), p.source.end(), kExtra), end; it != end; ++it) {
      ++extras;
      EXPECT_EQ((*it)[2].str().rfind("batch_size, ", 0), 0u) << (*it)[0].str() << "\n" << p.source;
    }
  }
  EXPECT_GT(extras, 10);
}

}  // namespace
}  // namespace kiln::datagen
