// The metrics of `kiln bench` against hand-computed cases (docs/bench.md).
#include <gtest/gtest.h>

#include <cmath>

#include "bench/metrics.h"

namespace kiln::bench {
namespace {

// C(n, k) by the multiplicative formula, in doubles (exact for these sizes).
double Choose(int n, int k) {
  if (k < 0 || k > n) return 0;
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

TEST(PassAtK, MatchesTheClosedForm) {
  for (int n = 1; n <= 12; ++n)
    for (int c = 0; c <= n; ++c)
      for (int k = 1; k <= n; ++k) {
        double closed = 1.0 - Choose(n - c, k) / Choose(n, k);
        ASSERT_NEAR(*PassAtK(n, c, k), closed, 1e-12) << n << " " << c << " " << k;
      }
}

TEST(PassAtK, HandCasesAndEdges) {
  EXPECT_DOUBLE_EQ(*PassAtK(10, 3, 1), 0.3);            // pass@1 = c / n
  EXPECT_NEAR(*PassAtK(5, 2, 2), 1 - 3.0 / 10, 1e-12);  // 1 - C(3,2)/C(5,2) = 0.7
  EXPECT_DOUBLE_EQ(*PassAtK(4, 0, 2), 0.0);
  EXPECT_DOUBLE_EQ(*PassAtK(4, 3, 2), 1.0);    // n - c < k: every k-subset holds a correct one
  EXPECT_FALSE(PassAtK(3, 1, 5).has_value());  // n < k: undefined
  EXPECT_FALSE(PassAtK(3, 1, 0).has_value());
}

TEST(Speedup, TritonBenchSumsTimesOverThePerfSizes) {
  // (1 + 3 + 6) / (2 + 1 + 2) = 2.0; the `test` case is not a perf size and does not count
  std::vector<CaseTime> cs = {{"test", 100, 1}, {"perf_0", 1, 2}, {"perf_1", 3, 1}, {"perf_2", 6, 2}};
  EXPECT_DOUBLE_EQ(*TritonBenchSpeedup(cs), 2.0);
  // not the mean of the ratios (0.5, 3, 3 -> 2.1667)
  EXPECT_NE(*TritonBenchSpeedup(cs), (0.5 + 3 + 3) / 3);
  // no perf case: every timed case
  EXPECT_DOUBLE_EQ(*TritonBenchSpeedup({{"test", 3, 2}}), 1.5);
  EXPECT_FALSE(TritonBenchSpeedup({}).has_value());
  EXPECT_FALSE(TritonBenchSpeedup({{"perf_0", 1, 0}}).has_value());
}

TEST(Speedup, KernelBenchIsReferenceOverCandidate) {
  EXPECT_DOUBLE_EQ(*KernelBenchSpeedup({{"default", 3, 2}}), 1.5);
  EXPECT_NEAR(*KernelBenchSpeedup({{"a", 4, 1}, {"b", 1, 1}}), 2.0, 1e-12);  // geomean of 4 and 1
}

std::vector<SampleOutcome> Samples() {
  // task a: 2 correct (1.5x, 0.5x), 1 wrong; task b: 1 correct exactly at 1.2x, 1 hacked, 1 crash;
  // task c: 1 no code, 1 failed (compile), 1 correct at 2.0x (exactly p = 2)
  return {{"a", "0", Outcome::kCorrect, "ok", {}, 1.5},
          {"a", "1", Outcome::kCorrect, "ok", {}, 0.5},
          {"a", "2", Outcome::kWrong, "mismatch", {"mismatch"}, std::nullopt},
          {"b", "0", Outcome::kCorrect, "ok", {}, 1.2},
          {"b", "1", Outcome::kHacked, "rejected", {"torch_compute"}, std::nullopt},
          {"b", "2", Outcome::kFailed, "crash", {"no_response"}, std::nullopt},
          {"c", "0", Outcome::kNoCode, "no_code", {}, std::nullopt},
          {"c", "1", Outcome::kFailed, "compile_error", {"syntax_error"}, std::nullopt},
          {"c", "2", Outcome::kCorrect, "ok", {}, 2.0}};
}

TEST(Summarize, HandCountedChannel) {
  auto s = Samples();
  std::vector<TaskMetrics> ts = {TaskOf("a", s), TaskOf("b", s), TaskOf("c", s)};
  EXPECT_EQ(ts[0].called, 3);
  EXPECT_EQ(ts[0].correct, 2);
  EXPECT_NEAR(*ts[0].speedup, std::sqrt(1.5 * 0.5), 1e-12);
  ChannelMetrics m = Summarize(ts, s, {1, 2, 5}, {0, 1, 1.2, 2});
  // call: a 3/3, b 1/3, c 1/3 -> 5/9; exec: 2/3, 1/3, 1/3 -> 4/9
  EXPECT_NEAR(m.call_acc, 5.0 / 9, 1e-12);
  EXPECT_NEAR(m.exec_acc, 4.0 / 9, 1e-12);
  // fast_0 = exec; fast_1: a 1/3 (1.5), b 1/3 (1.2), c 1/3 (2.0) -> 1/3
  EXPECT_NEAR(m.fast_p.at(0), 4.0 / 9, 1e-12);
  EXPECT_NEAR(m.fast_p.at(1), 1.0 / 3, 1e-12);
  // fast_1.2 is strict: b's 1.2x does not count -> (1/3 + 0 + 1/3) / 3
  EXPECT_NEAR(m.fast_p.at(1.2), 2.0 / 9, 1e-12);
  // fast_2 is strict: c's 2.0x does not count -> 0
  EXPECT_NEAR(m.fast_p.at(2), 0.0, 1e-12);
  // pass@1 = mean of c/n = 4/9; pass@2: a 1 - C(1,2)/C(3,2) = 1, b 1 - C(2,2)/C(3,2) = 2/3, c 2/3
  EXPECT_NEAR(*m.pass_at_k.at(1), 4.0 / 9, 1e-12);
  EXPECT_NEAR(*m.pass_at_k.at(2), (1 + 2.0 / 3 + 2.0 / 3) / 3, 1e-12);
  EXPECT_FALSE(m.pass_at_k.at(5).has_value());  // n = 3 < 5 everywhere
  EXPECT_EQ(m.pass_at_k_tasks.at(5), 0);
  // geomean over tasks with a speedup: sqrt(0.75), 1.2, 2.0
  EXPECT_NEAR(*m.geomean_speedup, std::cbrt(std::sqrt(0.75) * 1.2 * 2.0), 1e-12);
  EXPECT_EQ(m.outcomes.at(Outcome::kHacked), 1);
  EXPECT_EQ(m.outcomes.at(Outcome::kFailed), 2);
  EXPECT_EQ(m.hacked_reasons.at("torch_compute"), 1);
  EXPECT_EQ(m.failed_reasons.at("syntax_error"), 1);
  EXPECT_EQ(m.failed_reasons.at("no_response"), 1);
  EXPECT_EQ(m.failed_reasons.count("no_code"), 0u);  // no code is an outcome of its own, not a failure reason
  EXPECT_EQ(m.failed_reasons.size(), 2u);
  EXPECT_EQ(m.wrong_reasons.at("mismatch"), 1);
}

TEST(Summarize, UntimedFastPIsUnavailableNotZero) {
  std::vector<SampleOutcome> s = {{"a", "0", Outcome::kCorrect, "ok", {}, std::nullopt}};
  ChannelMetrics m = Summarize({TaskOf("a", s)}, s, {1}, {0, 1});
  EXPECT_FALSE(m.timed);
  EXPECT_DOUBLE_EQ(m.fast_p.at(0), 1.0);
  EXPECT_EQ(m.fast_p.count(1), 0u);
  EXPECT_FALSE(m.geomean_speedup.has_value());
}

TEST(FastCurve, StepsDownAtEachSpeedup) {
  auto s = Samples();
  std::vector<TaskMetrics> ts = {TaskOf("a", s), TaskOf("b", s), TaskOf("c", s)};
  auto curve = FastCurve(ts, 3.0, 6);  // p = 0, 0.5, 1, ..., 3
  ASSERT_EQ(curve.size(), 7u);
  EXPECT_NEAR(curve[0].second, 4.0 / 9, 1e-12);
  EXPECT_NEAR(curve[1].second, 3.0 / 9, 1e-12);  // 0.5x is not > 0.5
  EXPECT_NEAR(curve[4].second, 0.0, 1e-12);      // p = 2
}

TEST(Outcome, OfVerdicts) {
  EXPECT_EQ(OutcomeOfVerdict("ok"), Outcome::kCorrect);
  EXPECT_EQ(OutcomeOfVerdict("mismatch"), Outcome::kWrong);
  EXPECT_EQ(OutcomeOfVerdict("rejected"), Outcome::kHacked);
  EXPECT_EQ(OutcomeOfVerdict("timeout"), Outcome::kFailed);
  EXPECT_EQ(OutcomeOfVerdict("no_code"), Outcome::kNoCode);
  EXPECT_FALSE(Called(Outcome::kHacked));
  EXPECT_TRUE(Called(Outcome::kWrong));
}

}  // namespace
}  // namespace kiln::bench
