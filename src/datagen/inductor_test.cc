// The readability pass and the conversion on Inductor output recorded on an H100 (tests/datagen/, recorded by
// bench/gpu/datagen_run.sh): golden candidates, and the properties every candidate must have.
// KILN_UPDATE_GOLDEN=1 rewrites the golden files.
#include "datagen/inductor.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <gtest/gtest.h>

#include "common/file.h"
#include "common/strings.h"
#include "datagen/inductor_kernels.h"
#include "datagen/inductor_test_data.h"

namespace kiln::datagen {
namespace {

namespace fs = std::filesystem;

using test_data::Captures;
using test_data::kData;

std::string ProgramText(const std::string& id) {
  if (StartsWith(id, "kb/")) {  // kb/level1/NAME -> the corpus, read in place
    auto t = ReadFile((fs::path(KILN_CORPUS_DIR) / "kernelbench" / id.substr(3)).string() + ".py");
    return t.ok() ? *t : "";
  }
  auto t = ReadFile((kData / "programs" / (id + ".py")).string());
  return t.ok() ? *t : "";
}

void CheckGolden(const std::string& id, const std::string& text) {
  std::string name = id;
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  fs::path golden = kData / "golden" / (name + ".py");
  if (std::getenv("KILN_UPDATE_GOLDEN")) {
    ASSERT_TRUE(WriteFile(golden.string(), text).ok());
    return;
  }
  auto want = ReadFile(golden.string());
  ASSERT_TRUE(want.ok()) << golden << " is missing (KILN_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(text, *want) << "candidate of " << id << " differs from " << golden;
}

// What every converted candidate must be: standalone Triton, nothing of inductor's runtime left.
void CheckStandalone(const std::string& id, const Conversion& c) {
  for (const char* banned : {"torch._inductor", "triton_heuristics", "triton_helpers", "extern_kernels",
                             "async_compile", "empty_strided_cuda", "get_raw_stream", "tl_math",
                             "reinterpret_tensor"}) {
    EXPECT_FALSE(Contains(c.source, banned)) << id << " still has " << banned;
  }
  // pointers are named by what they hold (x_ptr, linear0_weight_ptr, out_ptr), not by position
  EXPECT_FALSE(std::regex_search(c.source, std::regex("\\b(in_|out_|in_out_)ptr[0-9]"))) << id;
  EXPECT_TRUE(Contains(c.source, "class ModelNew(nn.Module):")) << id;
  EXPECT_FALSE(c.kernels.empty()) << id;
  for (const auto& k : c.kernels) {
    EXPECT_TRUE(Contains(c.source, "# " + k.name + ": a " + k.kind + " kernel")) << id << ": no comment for " << k.name;
    EXPECT_TRUE(Contains(c.source, "@triton.jit\ndef " + k.name + "(")) << id << ": " << k.name << " not a plain jit";
    EXPECT_TRUE(Contains(c.source, k.name + "[(")) << id << ": " << k.name << " has no explicit grid";
  }
}

TEST(InductorConversion, ComposedProgramsRecordedOnTheGpu) {
  auto caps = Captures("captures.jsonl");
  ASSERT_EQ(caps.size(), 17u);
  for (const auto& [id, cap] : caps) {
    std::string program = ProgramText(id);
    ASSERT_FALSE(program.empty()) << id;
    Conversion c = ConvertCapture(program, cap);
    ASSERT_TRUE(c.ok) << id << ": " << c.reason << ": " << c.message;
    CheckStandalone(id, c);
    CheckGolden(id, c.source);
  }
  // a looped reduction with an online softmax and a scan: lowered to kiln's helpers
  Conversion scan = ConvertCapture(ProgramText("comp_1_00013"), caps.at("comp_1_00013"));
  for (const char* h : {"def pick_where(", "def softmax_merge_block(", "def softmax_finish(", "tl.associative_scan("})
    EXPECT_TRUE(Contains(scan.source, h)) << h;
}

TEST(InductorConversion, CorpusProgramsGemmTemplatesWelfordOnlineSoftmaxArgmax) {
  if (!fs::exists(fs::path(KILN_CORPUS_DIR) / "kernelbench")) GTEST_SKIP() << "no corpus at " << KILN_CORPUS_DIR;
  auto caps = Captures("corpus_captures.jsonl");
  std::map<std::string, std::string> helpers = {{"kb/level1/40_LayerNorm", "welford_update"},
                                                {"kb/level1/95_CrossEntropyLoss", "softmax_merge_block"},
                                                {"kb/level1/51_Argmax_over_a_dimension", "argmax_rows"},
                                                {"kb/level1/52_Argmin_over_a_dimension", "argmin_step"}};
  for (const auto& [id, cap] : caps) {
    Conversion c = ConvertCapture(ProgramText(id), cap);
    if (Contains(id, "conv_standard")) {  // a convolution goes to extern_kernels: dropped with the reason
      EXPECT_FALSE(c.ok);
      EXPECT_EQ(c.reason, "extern_kernel") << c.message;
      EXPECT_TRUE(Contains(c.message, "extern_kernels.convolution")) << c.message;
      continue;
    }
    ASSERT_TRUE(c.ok) << id << ": " << c.reason << ": " << c.message;
    CheckStandalone(id, c);
    CheckGolden(id, c.source);
    if (auto it = helpers.find(id); it != helpers.end())
      EXPECT_TRUE(Contains(c.source, "def " + it->second + "(")) << id << " lacks its helper " << it->second;
    if (Contains(id, "Matmul") || Contains(id, "Gemm")) {
      EXPECT_TRUE(Contains(c.source, "template (GEMM)")) << id;
      EXPECT_TRUE(Contains(c.source, "tl.dot(")) << id;
    }
  }
}

nlohmann::json FirstComposed() { return Captures("captures.jsonl").begin()->second; }

TEST(InductorConversion, RejectsWithReasons) {
  auto caps = Captures("captures.jsonl");
  const auto& [id, cap] = *caps.begin();
  std::string program = ProgramText(id);
  nlohmann::json two = cap;
  two["codes"].push_back(cap["codes"][0]);
  EXPECT_EQ(ConvertCapture(program, two).reason, "graph_breaks");
  nlohmann::json failed = cap;
  failed["ok"] = false;
  EXPECT_EQ(ConvertCapture(program, failed).reason, "not_captured");
  nlohmann::json no_launch = cap;
  no_launch["launches"] = nlohmann::json::array();
  EXPECT_EQ(ConvertCapture(program, no_launch).reason, "launch_not_recorded");
  nlohmann::json unknown = cap;
  unknown["call_args"][0] = {{"kind", "unknown_tensor"}};
  EXPECT_EQ(ConvertCapture(program, unknown).reason, "unmapped_argument");
  nlohmann::json helper = cap;
  std::string code = helper["codes"][0];
  size_t at = code.find("tl.store(");
  ASSERT_NE(at, std::string::npos);
  code.insert(at, "tmp_x = triton_helpers.bucketize_binary_search(0)\n    ");
  helper["codes"][0] = code;
  Conversion h = ConvertCapture(program, helper);
  EXPECT_EQ(h.reason, "helper_not_lowered") << h.message;
  EXPECT_TRUE(Contains(h.message, "bucketize_binary_search"));
  nlohmann::json extern_call = cap;
  code = extern_call["codes"][0];
  at = code.find("return (");
  ASSERT_NE(at, std::string::npos);
  code.insert(at, "extern_kernels.mm(buf0, buf0, out=buf0)\n        ");
  extern_call["codes"][0] = code;
  EXPECT_EQ(ConvertCapture(program, extern_call).reason, "extern_kernel");
  EXPECT_EQ(ConvertCapture("class Model:\n  def forward(self, x): return x\n", nlohmann::json::array()).reason,
            "not_captured");
}

TEST(ReadabilityPass, LowersHelpersRenamesPointersAndTemporaries) {
  RawKernel k;
  k.name = "triton_per_fused_amax_0";
  k.source = R"(import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
triton_helpers.set_driver_to_gpu()

@triton_heuristics.persistent_reduction(
    size_hints={'x': 16, 'r0_': 64},
    filename=__file__,
)
@triton.jit
def triton_per_fused_amax_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    R0_BLOCK: tl.constexpr = 64
    tmp0 = tl.load(in_ptr0 + (tl.arange(0, R0_BLOCK)[None, :]), None)
    tmp1 = triton_helpers.max2(tmp0, 1)[:, None]
    tmp2 = tl_math.exp(tmp0 - tmp1)
    tmp3 = triton_helpers.maximum(tmp2, tmp0)
    tl.store(out_ptr0 + (tl.arange(0, R0_BLOCK)[None, :]), tmp3, None)
)";
  auto r = MakeReadable(k, {{"in_ptr0", "x"}, {"out_ptr0", "out"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string want = R"(@triton.jit
def per_fused_amax_0(x_ptr, out_ptr, xnumel, r0_numel, XBLOCK : tl.constexpr):
    R0_BLOCK: tl.constexpr = 64
    x_val_0 = tl.load(x_ptr + (tl.arange(0, R0_BLOCK)[None, :]), None)
    max_1 = tl.max(x_val_0, 1)[:, None]
    exp_2 = tl.exp(x_val_0 - max_1)
    tmp3 = nan_maximum(exp_2, x_val_0)
    tl.store(out_ptr + (tl.arange(0, R0_BLOCK)[None, :]), tmp3, None)
)";
  EXPECT_EQ(r->text, want);
  EXPECT_EQ(r->kind, "persistent reduction");
  EXPECT_EQ(r->helpers, std::vector<std::string>{"nan_maximum"});
  EXPECT_EQ(r->constexpr_params, std::vector<std::string>{"XBLOCK"});
}

}  // namespace
}  // namespace kiln::datagen
