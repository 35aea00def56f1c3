// Unit tests of the serve module's pure parts: the reward formulas and GRPO's group advantages (the format
// rules and the gate: src/response/extract_test.cc; the HTTP service itself: tests/serve).
#include <gtest/gtest.h>

#include "serve/reward.h"

namespace kiln::serve {
namespace {

Components Correct(double speedup) {
  Components c;
  c.has_code = c.format = c.gate = c.compiled = c.correct = true;
  c.speedup = speedup;
  return c;
}

TEST(Reward, Presets) {
  auto at = Preset("autotriton"), kv = Preset("kevin"), dk = Preset("drkernel");
  ASSERT_TRUE(at.ok() && kv.ok() && dk.ok());
  EXPECT_DOUBLE_EQ(Reward(*at, Correct(3)), 1.0);
  Components wrong = Correct(3);
  wrong.correct = false;
  wrong.speedup.reset();
  EXPECT_DOUBLE_EQ(Reward(*at, wrong), 0.0);
  Components ungated = Correct(3);
  ungated.gate = false;
  EXPECT_DOUBLE_EQ(Reward(*at, ungated), 0.0);
  EXPECT_DOUBLE_EQ(Reward(*kv, Correct(2)), 2.3);
  EXPECT_DOUBLE_EQ(Reward(*kv, Correct(50)), 10.3);  // speedup capped at 10
  // drkernel (KernelGYM's calculate_reward_speedup): 0.5 correct + 0.5 min(speedup, 3) + 0.5 coverage
  EXPECT_DOUBLE_EQ(Reward(*dk, Correct(1.5)), 1.25);
  EXPECT_DOUBLE_EQ(Reward(*dk, Correct(0.5)), 0.75);  // slower than the reference: still its speedup term
  EXPECT_DOUBLE_EQ(Reward(*dk, Correct(9)), 2.0);     // capped at 3
  Components covered = Correct(2);
  covered.coverage = 0.8;  // the candidate's own share of the GPU time
  EXPECT_DOUBLE_EQ(Reward(*dk, covered), 0.5 + 1.0 + 0.4);
  covered.coverage = 7;  // clamped to 1
  EXPECT_DOUBLE_EQ(Reward(*dk, covered), 2.0);
  EXPECT_DOUBLE_EQ(Reward(*at, covered), 1.0);  // other presets ignore it
  Components wrong_cov = covered;
  wrong_cov.correct = false;
  EXPECT_DOUBLE_EQ(Reward(*dk, wrong_cov), 0.0);  // only a correct kernel's share counts
  Components hacked;
  hacked.has_code = hacked.gate = hacked.format = hacked.hacked = true;
  EXPECT_DOUBLE_EQ(Reward(*dk, hacked), 0.0);  // KernelGYM's penalty_score for a decoy: 0.0
  auto dk_decoy = FormulaFromJson({{"preset", "drkernel"}, {"w_hacked", -1}});  // calculate_reward_like_kernel
  ASSERT_TRUE(dk_decoy.ok());
  EXPECT_DOUBLE_EQ(Reward(*dk_decoy, hacked), -1.0);
  EXPECT_DOUBLE_EQ(Reward(*at, hacked), 0.0);
  EXPECT_FALSE(Preset("nope").ok());
}

TEST(Reward, CustomWeightsAndErrors) {
  auto f = FormulaFromJson({{"preset", "kevin"}, {"w_format", 0.1}, {"require_gate", false}});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->name, "custom:kevin");
  Components c;
  c.has_code = c.format = true;
  EXPECT_DOUBLE_EQ(Reward(*f, c), 0.1);
  auto typo = FormulaFromJson({{"w_corect", 1}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("w_corect"), std::string::npos);
  EXPECT_FALSE(FormulaFromJson({{"w_correct", "1"}}).ok());
  EXPECT_FALSE(FormulaFromJson({{"speedup_min", 5}, {"speedup_cap", 1}}).ok());
}

TEST(Reward, GroupAdvantages) {
  auto a = GroupAdvantages({1.0, 0.0, 0.0, std::nullopt});
  ASSERT_EQ(a.size(), 4u);
  // mean 1/3, unbiased sd sqrt(1/3)
  EXPECT_NEAR(*a[0], (2.0 / 3) / (std::sqrt(1.0 / 3) + 1e-6), 1e-9);
  EXPECT_NEAR(*a[1], (-1.0 / 3) / (std::sqrt(1.0 / 3) + 1e-6), 1e-9);
  EXPECT_FALSE(a[3].has_value());
  auto same = GroupAdvantages({0.5, 0.5});
  EXPECT_DOUBLE_EQ(*same[0], 0.0);
  EXPECT_DOUBLE_EQ(*GroupAdvantages({2.0})[0], 0.0);
}

}  // namespace
}  // namespace kiln::serve
