#include "exec/kernel_facts.h"

#include <gtest/gtest.h>

#include "exec/result.h"

namespace kiln::exec {
namespace {

using nlohmann::json;

const char* kResponse = R"({"id": "1", "ok": true, "verdict": "ok", "kernels": [
  {"name": "k1", "launches": 3, "n_regs": 40, "n_spills": 0, "shared_bytes": 1024, "num_warps": 4,
   "num_stages": 2, "grid": [128, 1, "?"], "constexprs": {"BLOCK": 64}, "extra": "ignored"},
  {"name": "k2", "fp32_dot_without_tensor_cores": true}]})";

// The eval response and a facts file go through one reader: the same kernels either way.
TEST(KernelFacts, OneReaderForResponsesAndFactsFiles) {
  auto r = EvalResult::FromResponse(json::parse(kResponse));
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto f = KernelFactsFromJson(json::parse(kResponse));
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(r->kernels.size(), 2u);
  ASSERT_EQ(f->size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(ToJson(r->kernels[i]), ToJson((*f)[i])) << i;
  const KernelFacts& k = (*f)[0];
  EXPECT_EQ(k.name, "k1");
  EXPECT_EQ(k.launches, 3);
  EXPECT_EQ(k.n_regs, 40);
  EXPECT_EQ(k.n_spills, 0);
  EXPECT_EQ(k.shared_bytes, 1024);
  EXPECT_EQ(k.num_warps, 4);
  EXPECT_EQ(k.num_stages, 2);
  EXPECT_EQ(k.grid, (std::vector<int64_t>{128, 1, 0}));  // a non-number keeps its axis, as 0
  EXPECT_EQ(k.constexprs, json({{"BLOCK", 64}}));
  EXPECT_FALSE(k.has_dot);
  EXPECT_TRUE((*f)[1].fp32_dot_without_tensor_cores);
  EXPECT_TRUE((*f)[1].has_dot);  // implied
  EXPECT_FALSE((*f)[1].n_regs.has_value());
}

TEST(KernelFacts, BareArrayAndErrors) {
  auto bare = KernelFactsFromJson(json::parse(R"([{"name": "a", "has_dot": true}])"));
  ASSERT_TRUE(bare.ok());
  ASSERT_EQ(bare->size(), 1u);
  EXPECT_TRUE((*bare)[0].has_dot);
  EXPECT_FALSE(KernelFactsFromJson(json::parse(R"({"other": []})")).ok());
  EXPECT_FALSE(KernelFactsFromJson(json::parse(R"({"kernels": {}})")).ok());
  auto unnamed = KernelFactsFromJson(json::parse(R"([{"n_regs": 3}])"));
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.status().code(), Code::kParse);
  EXPECT_EQ(unnamed.status().message(), "each kernel fact needs a string \"name\"");
  EXPECT_FALSE(KernelFactsFromJson(json::parse(R"([3])")).ok());
}

TEST(KernelFacts, ToJsonWritesWhatIsKnownAndReadsBack) {
  KernelFacts f;
  f.name = "k";
  f.n_regs = 32;
  json j = ToJson(f);
  EXPECT_EQ(j, json::parse(R"({"name": "k", "n_regs": 32, "has_dot": false,
                               "fp32_dot_without_tensor_cores": false})"));
  f.launches = 2;
  f.grid = {8, 2};
  f.constexprs = {{"B", 16}};
  f.fp32_dot_without_tensor_cores = f.has_dot = true;
  auto back = KernelFactsFromJson(json::array({ToJson(f)}));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToJson((*back)[0]), ToJson(f));
  EXPECT_EQ((*back)[0].launches, 2);
}

TEST(KernelFacts, MergeFillsUnsetFieldsAndOrsStaticFlags) {
  KernelFacts compile;
  compile.name = "k";
  compile.n_regs = 40;
  compile.constexprs = {{"BLOCK", 64}};
  KernelFacts stat;
  stat.name = "k";
  stat.n_regs = 99;  // compile facts win
  stat.num_warps = 8;
  stat.constexprs = {{"BLOCK", 1}, {"N", 2}};
  stat.has_dot = stat.fp32_dot_without_tensor_cores = true;
  KernelFacts other;
  other.name = "other";
  auto m = MergeFacts({compile}, {stat, other});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].n_regs, 40);
  EXPECT_EQ(m[0].num_warps, 8);
  EXPECT_EQ(m[0].constexprs, json({{"BLOCK", 64}, {"N", 2}}));
  EXPECT_TRUE(m[0].has_dot && m[0].fp32_dot_without_tensor_cores);
  EXPECT_EQ(m[1].name, "other");
}

}  // namespace
}  // namespace kiln::exec
