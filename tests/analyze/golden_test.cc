// Golden tests for the analysis model: `ModuleToJson` of chosen modules compared with the
// expected JSON in tests/analyze/golden/<name>.json, which was checked by reading the kernels.
//
// Regenerate (then READ the diff before committing):
//   KILN_UPDATE_GOLDEN=1 build/<dir>/tests/analyze/kiln_analyze_golden_test
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "analysis/driver.h"
#include "analysis/json.h"
#include "common/file.h"

namespace kiln::analysis {
namespace {

struct Case {
  const char* name;  // golden file name (without .json)
  const char* path;  // relative to the corpus G kernels folder, or "extra/..." in tests/analyze
};

const Case kCases[] = {
    {"vector_addition", "vector_addition.py"},      // elementwise, grid lambda over meta
    {"softmax_triton1", "softmax_triton1.py"},      // softmax, conditional num_warps, computed BLOCK
    {"rms_norm_triton", "rms_norm_triton.py"},      // row reduction / normalization
    {"matmul_triton1", "matmul_triton1.py"},        // GEMM, dot in K loop
    {"attn_fwd_triton", "attn_fwd_triton.py"},      // attention (two dots around exp2)
    {"reversed_cumsum", "reversed_cumsum.py"},      // scan, autotune
    {"matmul_tma", "matmul_tma.py"},                // block pointers, function params
    {"fast_rms_layernorm", "fast_rms_layernorm.py"},  // alias launch, heuristics, class methods
    {"triton_argmax", "triton_argmax.py"},          // argmax reduction, helpers
    {"ksoftmax_triton", "ksoftmax_triton.py"},      // autotune + stacked heuristics
    {"tutorial_softmax", "extra/tutorial_softmax.py"},
    {"tutorial_matmul", "extra/tutorial_matmul.py"},
    {"tutorial_layernorm", "extra/tutorial_layernorm.py"},
    {"tutorial_flash_attention", "extra/tutorial_flash_attention.py"},
};

std::string SourcePath(const Case& c) {
  std::string p = c.path;
  if (p.rfind("extra/", 0) == 0) return std::string(KILN_SOURCE_DIR) + "/tests/analyze/" + p;
  return std::string(KILN_CORPUS_DIR) + "/tritonbench/G/kernels/" + p;
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, MatchesExpectedJson) {
  const Case& c = GetParam();
  FileReport r = AnalyzeFile(SourcePath(c));
  ASSERT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : FormatDiagnostic(r.diagnostics[0]));
  r.model->path = c.path;  // stable across checkouts
  std::string got = ModuleToJson(*r.model).dump(1) + "\n";
  std::string golden = std::string(KILN_SOURCE_DIR) + "/tests/analyze/golden/" + c.name + ".json";
  const char* update = std::getenv("KILN_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    ASSERT_TRUE(WriteFile(golden, got).ok());
    GTEST_SKIP() << "updated " << golden;
  }
  auto want = ReadFile(golden);
  ASSERT_TRUE(want.ok()) << want.status().message() << " (KILN_UPDATE_GOLDEN=1 creates it)";
  if (*want != got) {
    // Point at the first differing line for a readable failure.
    size_t i = 0;
    while (i < want->size() && i < got.size() && (*want)[i] == got[i]) ++i;
    size_t ls = want->rfind('\n', i == 0 ? 0 : i - 1);
    ls = ls == std::string::npos ? 0 : ls + 1;
    int line = 1 + static_cast<int>(std::count(want->begin(), want->begin() + ls, '\n'));
    FAIL() << golden << ":" << line << ": differs\n  want: " << want->substr(ls, want->find('\n', ls) - ls)
           << "\n  got:  " << got.substr(ls, got.find('\n', ls) - ls);
  }
}

INSTANTIATE_TEST_SUITE_P(Analyze, Golden, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace kiln::analysis
