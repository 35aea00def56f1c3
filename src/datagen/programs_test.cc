#include "datagen/programs.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "common/file.h"
#include "datagen/composer.h"

namespace kiln::datagen {
namespace {

namespace fs = std::filesystem;

fs::path Corpus() { return fs::path(KILN_CORPUS_DIR); }

TEST(Programs, KernelBenchAndTritonBenchT) {
  if (!fs::exists(Corpus() / "kernelbench")) GTEST_SKIP() << "no corpus";
  auto kb = ReadPrograms((Corpus() / "kernelbench" / "level1" / "24_LogSoftmax.py").string());
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  ASSERT_EQ(kb->size(), 1u);
  EXPECT_EQ((*kb)[0].id, "kb/level1/24_LogSoftmax");
  EXPECT_EQ((*kb)[0].origin, "kernelbench");
  EXPECT_NE((*kb)[0].licence, "unknown");
  EXPECT_NE(std::find((*kb)[0].families.begin(), (*kb)[0].families.end(), "normalization"), (*kb)[0].families.end());
  auto t = ReadPrograms((Corpus() / "tritonbench" / "T" / "kernels" / "add.py").string());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)[0].origin, "tritonbench_t");
  EXPECT_EQ((*t)[0].id, "tbt/add");
  EXPECT_FALSE((*t)[0].entry.empty());
  auto dir = ReadPrograms((Corpus() / "kernelbench" / "level2").string());
  ASSERT_TRUE(dir.ok());
  EXPECT_GT(dir->size(), 50u);
}

TEST(Programs, OtherFormatsAndMissingPathsAreErrors) {
  auto missing = ReadPrograms("/nonexistent/x.py");
  EXPECT_FALSE(missing.ok());
  if (!fs::exists(Corpus() / "tritonbench" / "G")) GTEST_SKIP() << "no corpus";
  for (const auto& e : fs::directory_iterator(Corpus() / "tritonbench" / "G" / "kernels")) {
    auto g = ReadPrograms(e.path().string(), "");
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message().find("not a program datagen reads"), std::string::npos) << g.status().message();
    break;
  }
}

TEST(Programs, ComposedProgramsReadBackAsComposed) {
  ComposedProgram c = Compose(4, 2);
  fs::path dir = fs::temp_directory_path() / "kiln_datagen_programs_test";
  fs::create_directories(dir);
  ASSERT_TRUE(WriteFile((dir / (c.name + ".py")).string(), c.source).ok());
  auto p = ReadPrograms((dir / (c.name + ".py")).string());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)[0].origin, "composed");
  EXPECT_EQ((*p)[0].id, c.name);
  EXPECT_EQ((*p)[0].ops, c.ops);
  EXPECT_EQ((*p)[0].families, c.families);
  EXPECT_EQ((*p)[0].dtype, c.dtype);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::datagen
