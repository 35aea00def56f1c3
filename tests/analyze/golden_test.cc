// Golden tests for the analysis model: `ModuleToJson` of chosen modules compared with the
// expected JSON in tests/analyze/golden/<name>.json, which was checked by reading the kernels.
//
// Regenerate (then READ the diff before committing):
//   KILN_UPDATE_GOLDEN=1 build/<dir>/tests/analyze/kiln_analyze_golden_test
#include <gtest/gtest.h>

#include <algorithm>
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
    {"vector_addition", "vector_addition.py"},        // elementwise, grid lambda over meta
    {"softmax_triton1", "softmax_triton1.py"},        // softmax, conditional num_warps, computed BLOCK
    {"rms_norm_triton", "rms_norm_triton.py"},        // row reduction / normalization
    {"matmul_triton1", "matmul_triton1.py"},          // GEMM, dot in K loop
    {"attn_fwd_triton", "attn_fwd_triton.py"},        // attention (two dots around exp2)
    {"reversed_cumsum", "reversed_cumsum.py"},        // scan, autotune
    {"matmul_tma", "matmul_tma.py"},                  // block pointers, function params
    {"fast_rms_layernorm", "fast_rms_layernorm.py"},  // alias launch, heuristics, class methods
    {"triton_argmax", "triton_argmax.py"},            // argmax reduction, helpers
    {"ksoftmax_triton", "ksoftmax_triton.py"},        // autotune + stacked heuristics
    {"tutorial_softmax", "extra/tutorial_softmax.py"},
    {"tutorial_matmul", "extra/tutorial_matmul.py"},
    {"tutorial_layernorm", "extra/tutorial_layernorm.py"},
    {"tutorial_flash_attention", "extra/tutorial_flash_attention.py"},
};

// JSON with small all-scalar objects/arrays (spans, names) on one line, so goldens read well.
void Pretty(const nlohmann::json& j, int indent, std::string& out) {
  auto scalar_only = [](const nlohmann::json& x) {
    for (const auto& v : x) {
      if (v.is_structured()) return false;
    }
    return true;
  };
  if (j.is_structured() && !j.empty() && !(scalar_only(j) && j.dump().size() < 100)) {
    bool obj = j.is_object();
    out += obj ? "{\n" : "[\n";
    size_t i = 0;
    for (auto it = j.begin(); it != j.end(); ++it, ++i) {
      out += std::string(indent + 1, ' ');
      if (obj) out += nlohmann::json(it.key()).dump() + ": ";
      Pretty(*it, indent + 1, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += std::string(indent, ' ') + (obj ? "}" : "]");
    return;
  }
  std::string d = j.dump();
  if (j.is_object() && !j.empty()) {
    // {"a":1,"b":2} -> {"a": 1, "b": 2}
    d.clear();
    size_t i = 0;
    for (auto it = j.begin(); it != j.end(); ++it, ++i) {
      d += (i ? ", " : "{") + nlohmann::json(it.key()).dump() + ": " + it->dump();
    }
    d += "}";
  } else if (j.is_array() && !j.empty()) {
    d.clear();
    for (size_t i = 0; i < j.size(); ++i) d += (i ? ", " : "[") + j[i].dump();
    d += "]";
  }
  out += d;
}

std::string SourcePath(const Case& c) {
  std::string p = c.path;
  if (p.rfind("extra/", 0) == 0) return std::string(KILN_SOURCE_DIR) + "/tests/analyze/" + p;
  return std::string(KILN_CORPUS_DIR) + "/tritonbench/G/kernels/" + p;
}

// Every {"text", "span"} pair in the JSON must be exact: the source bytes at the span are the text.
void CheckSpans(const nlohmann::json& j, const std::string& src, const std::string& where, int* checked) {
  if (j.is_object()) {
    if (j.contains("text") && j.contains("span") && j["text"].is_string()) {
      const auto& sp = j["span"];
      size_t b = sp["begin"], e = sp["end"];
      ASSERT_LE(e, src.size()) << where;
      EXPECT_EQ(src.substr(b, e - b), j["text"].get<std::string>()) << where;
      ++*checked;
    }
    for (auto it = j.begin(); it != j.end(); ++it) CheckSpans(*it, src, where + "." + it.key(), checked);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) CheckSpans(j[i], src, where + "[" + std::to_string(i) + "]", checked);
  }
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, SpansAreExact) {
  const Case& c = GetParam();
  FileReport r = AnalyzeFile(SourcePath(c));
  ASSERT_TRUE(r.ok());
  auto src = ReadFile(SourcePath(c));
  ASSERT_TRUE(src.ok());
  int checked = 0;
  CheckSpans(ModuleToJson(*r.model), *src, c.name, &checked);
  EXPECT_GT(checked, 10);
}

TEST_P(Golden, MatchesExpectedJson) {
  const Case& c = GetParam();
  FileReport r = AnalyzeFile(SourcePath(c));
  ASSERT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : FormatDiagnostic(r.diagnostics[0]));
  r.model->path = c.path;  // stable across checkouts
  std::string got;
  Pretty(ModuleToJson(*r.model), 0, got);
  got += "\n";
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
