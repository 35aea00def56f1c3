// Tests for kiln/rewrite: golden before/after diffs and refusals from tests/rewrite/golden.txt (small
// kernels in tests/rewrite/cases and TritonBench-G corpus kernels read in place), plus unit tests of
// the API pieces (tunables, request parsing, diffs, invariants).
#include "rewrite/rewrite.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/model.h"
#include "common/file.h"

namespace kiln::rewrite {
namespace {

namespace fs = std::filesystem;

const std::string kRoot = std::string(KILN_SOURCE_DIR) + "/tests/rewrite";
const std::string kCorpus = std::string(KILN_CORPUS_DIR) + "/tritonbench/G/kernels";

struct Case {
  int line = 0;
  std::string kind, file, kernel, request, expect;
};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<Case> LoadManifest() {
  std::vector<Case> out;
  std::ifstream in(kRoot + "/golden.txt");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (Trim(line).empty() || Trim(line)[0] == '#') continue;
    std::vector<std::string> parts;
    std::stringstream ss(line);
    std::string p;
    while (std::getline(ss, p, '|')) parts.push_back(Trim(p));
    if (parts.size() != 5) {
      ADD_FAILURE() << "golden.txt:" << n << ": expected 5 fields";
      continue;
    }
    out.push_back({n, parts[0], parts[1], parts[2], parts[3], parts[4]});
  }
  return out;
}

std::string PathOf(const std::string& file) {
  if (file.rfind("corpus/", 0) == 0) return kCorpus + "/" + file.substr(7);
  return kRoot + "/" + file;
}

TEST(RewriteGolden, Manifest) {
  auto cases = LoadManifest();
  ASSERT_GT(cases.size(), 20u);
  bool update = std::getenv("KILN_UPDATE_GOLDEN") != nullptr;
  int corpus_skipped = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE("golden.txt:" + std::to_string(c.line) + " " + c.file + " [" + c.request + "]");
    std::string path = PathOf(c.file);
    if (c.file.rfind("corpus/", 0) == 0 && !fs::exists(path)) {
      ++corpus_skipped;
      continue;
    }
    auto src = ReadFile(path);
    ASSERT_TRUE(src.ok()) << src.status().message();
    auto reqs = ParseRequests(c.request);
    ASSERT_TRUE(reqs.ok()) << reqs.status().message();
    auto out = ApplySequence(*src, path, Target{c.kernel, {}}, *reqs);
    if (c.kind == "refuse") {
      ASSERT_FALSE(out.ok()) << "expected a refusal, got:\n" << out->source;
      EXPECT_EQ(out.status().code(), Code::kInvalidArgument) << out.status().message();
      EXPECT_NE(out.status().message().find(c.expect), std::string::npos)
          << "reason '" << out.status().message() << "' lacks '" << c.expect << "'";
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status().message();
    std::string diff = UnifiedDiff(*src, out->source, "a/" + c.file, "b/" + c.file);
    EXPECT_FALSE(diff.empty());
    std::string golden = kRoot + "/golden/" + c.expect;
    if (update) {
      ASSERT_TRUE(WriteFile(golden, diff).ok());
      continue;
    }
    auto want = ReadFile(golden);
    ASSERT_TRUE(want.ok()) << "missing golden " << golden << " (run with KILN_UPDATE_GOLDEN=1)";
    EXPECT_EQ(diff, *want) << "golden " << c.expect << " differs; got:\n" << diff;
  }
  if (corpus_skipped) std::fprintf(stderr, "note: %d corpus cases skipped (no %s)\n", corpus_skipped, kCorpus.c_str());
}

// Unit tests ------------------------------------------------------------------------------------

struct Parsed {
  std::unique_ptr<pyast::Tree> tree;
  analysis::ModuleModel model;
};

Parsed Parse(const std::string& file) {
  auto src = ReadFile(PathOf(file));
  EXPECT_TRUE(src.ok());
  auto t = pyast::Tree::Parse(*src, file);
  EXPECT_TRUE(t.ok());
  auto m = analysis::AnalyzeModule(**t);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return {std::move(*t), std::move(*m)};
}

TEST(Check, AllKindsHaveReasons) {
  auto p = Parse("cases/matmul.py");
  auto all = CheckAll(*p.tree, p.model, Target{"matmul_kernel", {}});
  ASSERT_EQ(all.size(), 11u);  // every RewriteKind, lift_literals included
  for (const auto& [k, a] : all) EXPECT_FALSE(a.reason.empty()) << RewriteKindName(k);
  EXPECT_TRUE(Check(*p.tree, p.model, Target{"matmul_kernel", {}}, RewriteKind::kGroupMSwizzle));
  EXPECT_FALSE(Check(*p.tree, p.model, Target{"matmul_kernel", {}}, RewriteKind::kRowsPerProgram));
}

TEST(Apply, EditsAreLocal) {
  auto p = Parse("cases/vector_add.py");
  auto r = Apply(*p.tree, p.model, Target{"add_kernel", {}}, SetParams{{{"BLOCK_SIZE", 256}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string want = p.tree->text();
  size_t at = want.find("BLOCK_SIZE=1024");
  ASSERT_NE(at, std::string::npos);
  want.replace(at, 15, "BLOCK_SIZE=256");
  EXPECT_EQ(r->source, want);
}

TEST(Apply, RefusesWrongLaunchIndex) {
  auto p = Parse("cases/vector_add.py");
  auto r = Apply(*p.tree, p.model, Target{"add_kernel", {7}}, SetParams{{{"BLOCK_SIZE", 256}}});
  EXPECT_FALSE(r.ok());
}

TEST(Invariants, DetectsDoubleBinding) {
  auto p = Parse("cases/matmul_autotuned.py");
  std::string src = p.tree->text();
  size_t at = src.find("c.stride(0), c.stride(1))");
  ASSERT_NE(at, std::string::npos);
  src.insert(at + std::string("c.stride(0), c.stride(1)").size(), ", BLOCK_SIZE_M=32");
  Status s = CheckInvariants(src, p.model, Target{"matmul_kernel", {}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("BLOCK_SIZE_M"), std::string::npos) << s.message();
  EXPECT_TRUE(CheckInvariants(p.tree->text(), p.model, Target{"matmul_kernel", {}}).ok());
  EXPECT_FALSE(CheckInvariants("def f(:\n", p.model, Target{"matmul_kernel", {}}).ok());
}

TEST(Requests, RoundTrip) {
  const char* texts[] = {
      "set_params BLOCK_SIZE=256 num_warps=8",
      "insert_autotune key=M,N "
      "configs=BLOCK:64,num_warps:4,num_stages:3;BLOCK:128,num_warps:8,num_stages:2,maxnreg:128",
      "group_m_swizzle GROUP_M=4",
      "eviction_hints eviction_policy=evict_first cache_modifier=.cg",
      "dot_precision input_precision=tf32x3",
      "pipeline_loop num_stages=4 loop=1",
      "split_k SPLIT_K=8",
      "persistent_grid programs=132",
      "persistent_grid",
      "rows_per_program rows=2",
      "remove_masks n%BLOCK m%16 guard=0",
      "lift_literals",
      "lift_literals values=128,64",
  };
  for (const char* t : texts) {
    auto r = ParseRequest(t);
    ASSERT_TRUE(r.ok()) << t << ": " << r.status().message();
    EXPECT_EQ(Describe(*r), t);
  }
  EXPECT_FALSE(ParseRequest("frobnicate x=1").ok());
  EXPECT_FALSE(ParseRequest("set_params BLOCK=abc").ok());
  EXPECT_FALSE(ParseRequest("lift_literals values=12x").ok());
  EXPECT_FALSE(ParseRequest("").ok());
}

TEST(Diff, Unified) {
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
  EXPECT_EQ(UnifiedDiff("a\nb\nc\n", "a\nB\nc\n", "x", "y"), "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  EXPECT_EQ(UnifiedDiff("a\n", "a\nb\n", "x", "y"), "--- x\n+++ y\n@@ -1,1 +1,2 @@\n a\n+b\n");
}

}  // namespace
}  // namespace kiln::rewrite
