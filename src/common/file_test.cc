#include "common/file.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace kiln {
namespace {

namespace fs = std::filesystem;

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Make("kiln-file-test-");
    ASSERT_TRUE(d.ok()) << d.status().message();
    dir_ = std::move(d).value();
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }
  TempDir dir_;
};

TEST_F(FileTest, WriteThenReadKeepsEveryByte) {
  const std::string content("line\n\0binary\r\n\xff", 15);
  ASSERT_TRUE(WriteFile(Path("a.bin"), content).ok());
  auto r = ReadFile(Path("a.bin"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, content);
}

TEST_F(FileTest, WriteReplacesAndLeavesNoTemporary) {
  ASSERT_TRUE(WriteFile(Path("a.txt"), "first, and longer").ok());
  ASSERT_TRUE(WriteFile(Path("a.txt"), "second").ok());
  EXPECT_EQ(*ReadFile(Path("a.txt")), "second");
  EXPECT_FALSE(fs::exists(Path("a.txt.tmp")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_.path()), fs::directory_iterator()), 1);
}

TEST_F(FileTest, ReadErrorsSayWhatAndWhere) {
  auto missing = ReadFile(Path("nope.txt"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(), Path("nope.txt") + ": error: no such file");
  auto dir = ReadFile(dir_.path());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(dir.status().message(), dir_.path() + ": error: is a directory");
}

TEST_F(FileTest, WriteIntoAMissingDirectoryIsAnIoError) {
  Status s = WriteFile(Path("no/such/dir/a.txt"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_EQ(s.message().rfind(Path("no/such/dir/a.txt") + ": error: cannot write file", 0), 0u) << s.message();
}

TEST(TempDir, MadeUnderTmpdirAndRemovedWithEverythingInIt) {
  std::string path;
  {
    auto d = TempDir::Make("kiln-tempdir-test-");
    ASSERT_TRUE(d.ok()) << d.status().message();
    path = d->path();
    const char* tmp = std::getenv("TMPDIR");
    EXPECT_EQ(path.rfind(std::string(tmp && *tmp ? tmp : "/tmp") + "/kiln-tempdir-test-", 0), 0u) << path;
    EXPECT_TRUE(fs::is_directory(path));
    fs::create_directories(path + "/sub/deeper");
    ASSERT_TRUE(WriteFile(path + "/sub/deeper/f.txt", "x").ok());
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST(TempDir, MovesOwnership) {
  auto a = TempDir::Make("kiln-tempdir-test-");
  auto b = TempDir::Make("kiln-tempdir-test-");
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string pa = a->path(), pb = b->path();
  TempDir moved(std::move(a).value());
  EXPECT_EQ(moved.path(), pa);
  EXPECT_TRUE(fs::is_directory(pa));  // the moved-from object removed nothing
  moved = std::move(b).value();       // assignment removes what `moved` held
  EXPECT_FALSE(fs::exists(pa));
  EXPECT_EQ(moved.path(), pb);
  moved.Remove();
  EXPECT_FALSE(fs::exists(pb));
  EXPECT_TRUE(moved.path().empty());
}

TEST(TempDir, KilnKeepTmpKeepsIt) {
  std::string path;
  setenv("KILN_KEEP_TMP", "1", 1);
  {
    auto d = TempDir::Make("kiln-tempdir-test-");
    ASSERT_TRUE(d.ok());
    path = d->path();
  }
  unsetenv("KILN_KEEP_TMP");
  EXPECT_TRUE(fs::is_directory(path));
  fs::remove_all(path);
}

TEST(TempDir, BadTmpdirIsAnIoError) {
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  setenv("TMPDIR", "/nonexistent-kiln-dir", 1);
  auto d = TempDir::Make("x-");
  if (old)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::kIo);
  EXPECT_NE(d.status().message().find("/nonexistent-kiln-dir/x-XXXXXX"), std::string::npos) << d.status().message();
}

}  // namespace
}  // namespace kiln
