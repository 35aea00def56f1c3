// The tuning loop end to end with a fake measurer: finds the optimum, never returns a slower or
// wrong variant, keeps the original when nothing wins, stops at budgets, prunes before and after
// compiling, compiles in parallel, records every step, refuses to time without a GPU.
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fakes.h"
#include "search/loop.h"
#include "search/report.h"

namespace kiln::search {
namespace {

using testing::FakeMeasurer;
using testing::FakeRenderer;
using testing::ParseConfigs;
using testing::RenderConfig;

Space Space1D() {
  return Space({{"BLOCK_SIZE", Role::kBlock, {16, 32, 64, 128, 256, 512, 1024}, false},
                {"num_warps", Role::kNumWarps, {1, 2, 4, 8, 16}, true},
                {"num_stages", Role::kNumStages, {1, 2, 3, 4}, true}});
}

// Optimum BLOCK_SIZE=256, num_warps=8, num_stages=2: 0.5 ms; the baseline 64/4/3 is 1.0 ms + ...
double Time(const Config& c) {
  double b = std::log2(static_cast<double>(c.at("BLOCK_SIZE"))) - 8;
  double w = std::log2(static_cast<double>(c.at("num_warps"))) - 3;
  double s = static_cast<double>(c.at("num_stages")) - 2;
  return 0.5 * (1.0 + 0.25 * b * b + 0.15 * w * w + 0.05 * s * s);
}

const Config kBase{{"BLOCK_SIZE", 64}, {"num_warps", 4}, {"num_stages", 3}};
const Config kBest{{"BLOCK_SIZE", 256}, {"num_warps", 8}, {"num_stages", 2}};

OptimizeInput Input(const Config& base = kBase) {
  OptimizeInput in;
  in.task.name = "fake/task";
  in.task.hash = "0123456789abcdef";
  in.kernel = "kernel";
  in.space = Space1D();
  in.baseline = base;
  in.original_source = RenderConfig(base);
  return in;
}

struct Fixture {
  FakeMeasurer ev;
  FakeRenderer rr;
  double clock = 0;
  OptimizeOptions o;
  Fixture() {
    ev.time_ms = [](const Config& c, bool) { return Time(c); };
    ev.clock = &clock;
    ev.cost_s = 0.5;
    o.clock = [this] { return clock; };
    o.budget_seconds = 1000;
  }
  Result<OptimizeResult> Run(const OptimizeInput& in) { return Optimize(in, o, {&ev, &rr}); }
};

TEST(Loop, FindsTheOptimumAndVerifiesIt) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->improved) << r->kept_reason;
  EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(kBest));
  EXPECT_EQ(r->best_source, RenderConfig(kBest));
  EXPECT_NEAR(r->geomean_speedup, Time(kBase) / Time(kBest), 1e-6);
  ASSERT_EQ(r->cases.size(), 2u);
  for (const auto& c : r->cases) {
    EXPECT_TRUE(c.passed);
    EXPECT_GT(c.speedup, 1.0);
  }
  EXPECT_EQ(r->stop_reason, "converged");
  EXPECT_EQ(r->mode, "measure-only");
  // Verification ran with >= 3 trials, interleaved against the reference, on every case.
  bool verified = false;
  for (auto& c : f.ev.calls)
    if (c.config == kBest && c.trials >= 3 && c.time_reference) verified = true;
  EXPECT_TRUE(verified);
  // Reports render.
  EXPECT_NE(FormatReportText(*r).find("faster"), std::string::npos);
  EXPECT_NE(FormatReportHtml(*r).find("<table>"), std::string::npos);
  EXPECT_TRUE(r->ToJson().at("improved").get<bool>());
}

// An autotuned original picks its config anew in every process, so its time differs from request to
// request (on an H100, swiglu_backward's original: 0.0018-0.021 ms on one size). Verification times each
// finalist against the original in the same request; a lucky run of the original alone decides nothing.
TEST(Loop, VerifiesAgainstTheOriginalTimedInTheSameRequest) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  // Alone in a long request the original would look 4x faster than it is beside a finalist.
  f.ev.time_ms = [](const Config& c, bool long_timing) { return c == kBase && long_timing ? Time(c) / 4 : Time(c); };
  f.ev.baseline_ms = [](const Config& c) { return Time(c); };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->improved) << r->kept_reason;
  EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(kBest));
  EXPECT_NEAR(r->geomean_speedup, Time(kBase) / Time(kBest), 1e-6);
  for (const auto& c : r->cases) EXPECT_NEAR(c.baseline_ms / c.best_ms, Time(kBase) / Time(kBest), 1e-6);
  int long_runs = 0;
  for (auto& c : f.ev.calls) {
    if (c.mode != exec::Mode::kTime || c.trials < 3) continue;
    ++long_runs;
    EXPECT_TRUE(c.baseline) << "a verification run without the original beside it";
    EXPECT_NE(ConfigKey(c.config), ConfigKey(kBase)) << "the original timed alone in verification";
  }
  EXPECT_GE(long_runs, 2);
  // Only the verification runs carry the baseline: the search's short timings do not.
  for (auto& c : f.ev.calls)
    if (c.mode == exec::Mode::kTime && c.trials < 3) {
      EXPECT_FALSE(c.baseline);
    }
}

// An autotuned original runs the fastest of its configs (here 256/4/3, 0.6 ms) and its first config is
// 64/4/3 (1.1 ms). Started from the autotuned time, every neighbour of 64/4/3 looks worse and the search
// stops at once; started from 64/4/3 measured on its own, it walks to the optimum 256/8/2 (0.5 ms).
TEST(Loop, AutotunedOriginalSearchStartsFromItsFixedConfig) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  const Config near{{"BLOCK_SIZE", 256}, {"num_warps", 4}, {"num_stages", 3}};
  f.ev.case_ms = [](const Config& c, const std::string& name) { return Time(c) * (name == "large" ? 4.0 : 1.0); };
  OptimizeInput in = Input();
  in.autotuned = true;
  in.original_source = "# autotune\n" + RenderConfig(kBase) + RenderConfig(near);
  auto r = f.Run(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(r->candidates.size(), 2u);
  EXPECT_EQ(r->candidates[1].origin, "baseline config");
  EXPECT_EQ(ConfigKey(r->candidates[1].config), ConfigKey(kBase));
  // measured on its own: slower than the autotuned original by Time(kBase) / Time(near)
  EXPECT_NEAR(r->candidates[1].score_ms / r->candidates[0].score_ms, Time(kBase) / Time(near), 1e-9);
  EXPECT_TRUE(r->improved) << r->kept_reason;
  EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(kBest));
  EXPECT_NEAR(r->geomean_speedup, Time(near) / Time(kBest), 1e-6);  // against the autotuned original
  // Not autotuned: no separate measurement of the baseline config.
  Fixture g;
  g.o.strategy = "coordinate";
  auto r2 = g.Run(Input());
  ASSERT_TRUE(r2.ok());
  for (const auto& c : r2->candidates) EXPECT_NE(c.origin, "baseline config");
}

// A rewrite can break a path of the module that the timed sizes never take (on an H100, a set_params of
// flash_attn's _fwd_kernel changed its own test's result by 4.7): a finalist must also pass the task's
// own check before it wins.
TEST(Loop, WinnerMustPassTheTasksOwnCheck) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  f.ev.wrong_in_own_check = [](const Config& c) { return c == kBest; };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(ConfigKey(r->best_config), ConfigKey(kBest));
  bool rejected = false;
  for (const auto& c : r->candidates)
    if (c.config == kBest && c.final_outcome.find("fails the task's own check") != std::string::npos) rejected = true;
  EXPECT_TRUE(rejected);
  // The next finalist wins, and passed the own check (a check request with no named cases).
  EXPECT_TRUE(r->improved);
  bool checked = false;
  for (const auto& call : f.ev.calls)
    if (call.mode == exec::Mode::kCheck && call.cases.empty() && call.config == r->best_config) checked = true;
  EXPECT_TRUE(checked);
  // An original that fails its own check too cannot judge: the timed cases decide, and a note says so.
  Fixture g;
  g.o.strategy = "coordinate";
  g.o.patience = 100;
  g.ev.wrong_in_own_check = [](const Config& c) { return c == kBest || c == kBase; };
  auto r2 = g.Run(Input());
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(ConfigKey(r2->best_config), ConfigKey(kBest));
  bool noted = false;
  for (const auto& n : r2->notes) noted |= n.find("the original fails the task's own check too") != std::string::npos;
  EXPECT_TRUE(noted);
}

// Finalists differing only in warps, stages or a hint compute the same thing: when one fails the task's
// own check, the others with its block sizes are skipped, and the next candidates with other block sizes
// are verified instead (on an H200, fused_recurrent_delta's three BV=2 finalists failed its test one after
// another and the run kept the original; BV=1 and BV=4, also faster, were never tried).
TEST(Loop, FinalistsWhoseBlockSizesFailTheOwnCheckAreReplaced) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  f.o.finalists = 3;
  f.ev.wrong_in_own_check = [](const Config& c) { return c.at("BLOCK_SIZE") == 256; };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->improved) << r->kept_reason;
  EXPECT_NE(r->best_config.at("BLOCK_SIZE"), 256);
  int own_checks_256 = 0, skipped = 0, finalists_256 = 0;
  for (const auto& call : f.ev.calls)
    own_checks_256 += call.mode == exec::Mode::kCheck && call.cases.empty() && call.config.at("BLOCK_SIZE") == 256;
  for (const auto& c : r->candidates) {
    finalists_256 += c.finalist && c.config.at("BLOCK_SIZE") == 256;
    skipped += c.final_outcome.rfind("skipped: its block sizes (BLOCK_SIZE=256)", 0) == 0;
  }
  EXPECT_EQ(own_checks_256, 1);  // one failure teaches it; the others with BLOCK_SIZE=256 are not run
  EXPECT_GE(finalists_256, 2);
  EXPECT_EQ(skipped, finalists_256 - 1);
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("were replaced by the next") != std::string::npos;
  EXPECT_TRUE(noted);
  // A failure for another reason (slower on re-measurement, a mismatch on the timed cases) teaches nothing.
  Fixture g;
  g.o.strategy = "coordinate";
  g.o.patience = 100;
  g.o.finalists = 3;
  g.ev.wrong = [](const Config& c, int trials) { return c.at("BLOCK_SIZE") == 256 && trials >= 3; };
  auto r2 = g.Run(Input());
  ASSERT_TRUE(r2.ok());
  for (const auto& c : r2->candidates) EXPECT_EQ(c.final_outcome.rfind("skipped", 0), std::string::npos);
}

TEST(Loop, RejectsFasterButWrongCandidate) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  // kBest is the fastest but wrong; the one-trial search check misses it, verification catches it.
  f.ev.wrong = [](const Config& c, int trials) { return c == kBest && trials >= 3; };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_NE(ConfigKey(r->best_config), ConfigKey(kBest));
  bool rejected = false;
  for (const auto& c : r->candidates)
    if (c.config == kBest && c.final_outcome.rfind("rejected", 0) == 0) rejected = true;
  EXPECT_TRUE(rejected);
  if (r->improved) {
    EXPECT_GT(r->geomean_speedup, 1.0);
    EXPECT_LT(Time(r->best_config), Time(kBase));
  }
}

TEST(Loop, WrongEverywhereKeepsOriginal) {
  Fixture f;
  f.ev.wrong = [](const Config& c, int) { return !(c == kBase); };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->improved);
  EXPECT_EQ(r->best_source, RenderConfig(kBase));
  EXPECT_GT(r->failed, 0);
}

TEST(Loop, KeepsOriginalWhenNothingBeatsIt) {
  Fixture f;
  auto r = f.Run(Input(kBest));  // the original is already the optimum
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->improved);
  EXPECT_EQ(r->best_source, RenderConfig(kBest));
  EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(kBest));
  EXPECT_FALSE(r->kept_reason.empty());
}

TEST(Loop, NeverReturnsSlowerWhenShortTimingsLie) {
  Fixture f;
  // Short timings say BLOCK_SIZE=128 is 3x faster; the long interleaved timing shows it is slower.
  f.ev.time_ms = [](const Config& c, bool long_timing) {
    if (c.at("BLOCK_SIZE") == 128) return long_timing ? 1.2 * Time(kBase) : Time(kBase) / 3;
    return c == kBase ? Time(kBase) : 10.0;
  };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->improved);
  EXPECT_EQ(r->best_source, RenderConfig(kBase));
}

TEST(Loop, RejectsACaseThatGetsSlower) {
  Fixture f;
  f.ev.cases = {"small", "large"};
  // Faster on average but slower on one case: per-case timing differs via a wrapper.
  struct Skewed : FakeMeasurer {
    exec::EvalResult Run(const exec::EvalRequest& r) override {
      auto res = FakeMeasurer::Run(r);
      Config c = testing::ParseConfig(r.candidate_source.value_or(""));
      if (!(c == kBase))
        for (auto& cs : res.cases)
          if (cs.name == "small" && cs.candidate_ms) {
            cs.candidate_ms->median *= 8;  // 2x slower than the original on "small"
            if (cs.speedup) cs.speedup = *cs.speedup / 8;
            if (cs.speedup_spread)
              cs.speedup_spread = std::make_pair(cs.speedup_spread->first / 8, cs.speedup_spread->second / 8);
          }
      return res;
    }
  } ev;
  ev.time_ms = [](const Config& c, bool) { return c == kBase ? 1.0 : 0.25; };
  double clock = 0;
  ev.clock = &clock;
  f.o.clock = [&] { return clock; };
  auto r = Optimize(Input(), f.o, {&ev, &f.rr});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->improved) << "a variant slower on one case must not win";
}

TEST(Loop, StopsAtTimeBudget) {
  Fixture f;
  f.ev.cost_s = 10;  // each timed request costs 10 s of the fake clock
  f.o.budget_seconds = 60;
  f.o.patience = 100;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, "budget");
  // The search stops where three long verification runs (costed from the original's 10 s run) still
  // fit, but gets at least 15% of the budget; verification follows.
  int search_timed = 0;
  for (const auto& c : r->candidates) search_timed += (c.verdict == "ok" || c.verdict == "mismatch") && c.id > 0;
  EXPECT_LE(search_timed, 5);
}

TEST(Loop, StopsAtMaxEvals) {
  Fixture f;
  f.o.max_evals = 4;
  f.o.patience = 100;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_reason, "max-evals");
  int timed_short = 0;
  for (auto& c : f.ev.calls) timed_short += c.mode == exec::Mode::kTime && !c.time_reference;
  EXPECT_LE(timed_short, 4);
}

TEST(Loop, StopsAfterRoundsWithoutGain) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 1;
  f.ev.time_ms = [](const Config& c, bool) { return c == kBase ? 1.0 : 0.999; };  // 0.1% gains only
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->stop_reason.find("no gain"), std::string::npos) << r->stop_reason;
  EXPECT_FALSE(r->improved);  // 0.1% is below the 1% floor for a winner
}

TEST(Loop, PrunesBeforeAndAfterCompiling) {
  Fixture f;
  OptimizeInput in;
  in.task.name = "fake/gemm";
  in.kernel = "matmul";
  in.space = Space({{"BLOCK_M", Role::kBlockM, {64, 128, 256}, false},
                    {"BLOCK_N", Role::kBlockN, {64, 128, 256}, false},
                    {"BLOCK_K", Role::kBlockK, {32, 64, 128}, false},
                    {"num_warps", Role::kNumWarps, {4, 8}, true},
                    {"num_stages", Role::kNumStages, {2, 3, 4, 5}, true}});
  in.baseline = {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"num_warps", 4}, {"num_stages", 4}};
  in.original_source = RenderConfig(in.baseline);
  f.ev.time_ms = [](const Config& c, bool) {
    // Bigger is "faster" so the search pushes into pruned territory.
    return 100.0 / (c.at("BLOCK_M") * c.at("BLOCK_N") * c.at("BLOCK_K") * c.at("num_stages")) * 1e4;
  };
  f.ev.spills = [](const Config& c) { return c.at("num_stages") == 5 ? 100 : 0; };
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  f.o.tuned_seeds = false;  // the walk from the baseline is what this test follows
  auto r = f.Run(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  PruneContext p;
  int pruned_before = 0, pruned_after = 0;
  for (const auto& c : r->candidates) {
    if (c.verdict != "pruned") continue;
    if (c.message.find("spills") != std::string::npos)
      ++pruned_after;
    else
      ++pruned_before;
  }
  // Nothing over the shared-memory limit or spilling was ever timed.
  for (auto& call : f.ev.calls) {
    if (call.mode != exec::Mode::kTime || call.config.empty()) continue;
    EXPECT_LE(GemmSharedBytes(in.space, call.config, 2), p.smem_limit) << ConfigKey(call.config);
    EXPECT_LE(AccumulatorRegs(in.space, call.config), p.max_acc_regs) << ConfigKey(call.config);
    EXPECT_NE(call.config.at("num_stages"), 5) << "a spilling config was timed";
  }
  EXPECT_GT(pruned_after, 0);
  EXPECT_GT(r->pruned_static, 0);  // over the shared-memory limit or the register budget: never proposed
  EXPECT_GT(r->pruned, 0);
  EXPECT_TRUE(r->improved);
}

TEST(Loop, CompilesInParallel) {
  Fixture f;
  f.o.compile_jobs = 3;
  f.o.patience = 100;
  f.ev.cost_s = 0.01;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_GT(f.ev.Count(exec::Mode::kCompile), 0);
  EXPECT_GE(f.ev.max_concurrent.load(), 2);
  EXPECT_EQ(r->compiled, f.ev.Count(exec::Mode::kCompile));
}

TEST(Loop, BayesAndRulesAlsoWin) {
  for (const char* s : {"bayes", "rules"}) {
    Fixture f;
    f.o.strategy = s;
    f.o.max_evals = 40;
    f.o.patience = 100;
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << s;
    EXPECT_TRUE(r->improved) << s;
    EXPECT_EQ(r->strategy, s);
    EXPECT_LE(Time(r->best_config), Time(kBase) / 1.2) << s;
  }
}

TEST(Loop, NoGpuFailsClearlyUnlessDryRun) {
  Fixture f;
  f.ev.interpreter = true;
  auto r = f.Run(Input());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("--dry-run"), std::string::npos);
  EXPECT_EQ(f.ev.calls.size(), 0u);
  f.o.dry_run = true;
  auto d = f.Run(Input());
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->mode, "dry-run");
  EXPECT_FALSE(d->improved);
  EXPECT_EQ(f.ev.Count(exec::Mode::kTime), 0);
  EXPECT_GT(f.ev.Count(exec::Mode::kCheck), 1);
}

// Triton's interpreter ignores num_warps and num_stages: a dry run checks distinct programs (here, other
// BLOCK_SIZEs), never a config that differs from a checked one only in launch options; a space of
// launch options only checks nothing beyond the original, and says why.
TEST(Loop, DryRunChecksDistinctProgramsOnly) {
  Fixture f;
  f.ev.interpreter = true;
  f.o.dry_run = true;
  f.o.dry_run_candidates = 4;
  auto d = f.Run(Input());
  ASSERT_TRUE(d.ok()) << d.status().message();
  std::set<int64_t> blocks;
  for (const auto& call : f.ev.calls) {
    EXPECT_EQ(call.mode, exec::Mode::kCheck);
    ASSERT_TRUE(call.config.count("BLOCK_SIZE")) << ConfigKey(call.config);
    EXPECT_TRUE(blocks.insert(call.config.at("BLOCK_SIZE")).second) << ConfigKey(call.config);
  }
  EXPECT_GE(blocks.size(), 3u);  // the original (64) and its neighbours 32 and 128 at least
  EXPECT_TRUE(blocks.count(64));

  Fixture g;
  g.ev.time_ms = [](const Config&, bool) { return 1.0; };
  g.ev.interpreter = true;
  g.o.dry_run = true;
  OptimizeInput in = Input();
  in.space = Space(
      {{"num_warps", Role::kNumWarps, {1, 2, 4, 8, 16}, true}, {"num_stages", Role::kNumStages, {1, 2, 3, 4}, true}});
  in.baseline = {{"num_warps", 4}, {"num_stages", 3}};
  in.original_source = RenderConfig(in.baseline);
  auto e = g.Run(in);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(g.ev.Count(exec::Mode::kCheck), 1);  // the original only
  bool said = false;
  for (const auto& n : e->notes) said = said || n.find("interpreter ignores") != std::string::npos;
  EXPECT_TRUE(said);
}

// The three failures of issue 21 at the perf harness's largest sizes, where the original's own check (the
// task's default cases, as kiln eval runs it) passes: the original is kept with the reason, not an error.
TEST(Loop, OriginalFailingOnlyItsTimedRunIsKept) {
  for (const char* msg : {"OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 GiB",
                          "the candidate's in-place changes to its inputs differ from the reference's",
                          "RuntimeError: Offset increment outside graph capture encountered unexpectedly"}) {
    Fixture f;
    f.ev.fails_timed = [msg](const Config& c) { return c == kBase ? std::string(msg) : std::string(); };
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->improved);
    EXPECT_EQ(r->best_source, Input().original_source);
    EXPECT_EQ(r->kept_reason.rfind("original kept, because ", 0), 0u) << r->kept_reason;
    EXPECT_NE(r->kept_reason.find(msg), std::string::npos) << r->kept_reason;
    EXPECT_NE(r->kept_reason.find("passes its own check"), std::string::npos) << r->kept_reason;
    EXPECT_EQ(f.ev.Count(exec::Mode::kCheck), 1);  // the own check, nothing searched
  }
}

// An autotuned original whose timed run ran out of time (its autotuner timed every config at each new size:
// matrix_vector_multip past 120 s on an H200) is kept, and the reason says how to give it longer; a plain
// original's timeout does not get that hint.
class TimeoutOfTheOriginal : public FakeMeasurer {
 public:
  std::vector<double> timeouts;  // of the original's timed runs
  exec::EvalResult Run(const exec::EvalRequest& r) override {
    if (r.mode == exec::Mode::kTime && testing::ParseConfig(r.candidate_source.value_or("")) == kBase) {
      timeouts.push_back(r.timeout_s);
      return exec::EvalResult::Make(exec::Verdict::kTimeout, "timeout", "no answer within 130 s");
    }
    return FakeMeasurer::Run(r);
  }
};

TEST(Loop, AutotunedOriginalOutOfTimeSaysHowToGiveItLonger) {
  for (bool autotuned : {true, false}) {
    Fixture f;
    f.o.hard_end_s = 400;
    TimeoutOfTheOriginal m;
    m.time_ms = f.ev.time_ms;
    OptimizeInput in = Input();
    in.autotuned = autotuned;
    auto r = Optimize(in, f.o, {&m, &f.rr});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->improved);
    EXPECT_NE(r->kept_reason.find("failed its timed run (timeout): no answer within 130 s"), std::string::npos)
        << r->kept_reason;
    EXPECT_EQ(r->kept_reason.find("--hard-end-seconds, or --timeout without a hard end, gives it longer") !=
                  std::string::npos,
              autotuned)
        << r->kept_reason;
    // Its first timed run may take until the hard end (less the runner's grace); a plain original's, --timeout.
    ASSERT_FALSE(m.timeouts.empty());
    EXPECT_NEAR(m.timeouts[0], autotuned ? f.o.hard_end_s - f.o.runner_grace_s : f.o.timeout_s, 2.0) << m.timeouts[0];
  }
}

// A run whose hard end comes before any candidate could be measured (a slow original: verification's expected
// long runs leave the search no time) does not say "no candidate was faster": it says why nothing was measured
// and what hard end leaves the search time; with a later hard end the search runs.
TEST(Loop, HardEndBeforeAnyCandidateSaysWhatHardEndGivesTheSearchTime) {
  for (double hard_end : {40.0, 200.0}) {
    Fixture f;
    f.ev.cost_s = 5.0;  // each timed request: the original's baseline takes 5 s, so verification about 46 s
    f.o.hard_end_s = hard_end;
    f.o.budget_seconds = 20;
    f.o.budget_is_search = true;
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (hard_end < 100) {
      EXPECT_FALSE(r->improved);
      EXPECT_EQ(r->stop_reason, "hard end");
      EXPECT_EQ(r->kept_reason,
                "the run reached its hard end before any candidate was measured: 5 s went before the search, and "
                "verification needs about 46 s after it (its cases' timings); a --hard-end-seconds above 61 leaves "
                "the search time")
          << r->kept_reason;
    } else {
      EXPECT_EQ(r->kept_reason.find("before any candidate was measured"), std::string::npos) << r->kept_reason;
      EXPECT_GT(r->measured, 1);
    }
  }
}

// An original whose timed run fails and whose own check fails too is an error (it fails kiln eval), and the
// error states the own check's verdict and message, then the timed run's (chunk_gla_simple, session 17: the
// error named the timed run's mismatch as the own check's).
TEST(Loop, OriginalFailingItsOwnCheckTooSaysWhichCheck) {
  Fixture f;
  f.ev.fails_timed = [](const Config& c) { return c == kBase ? std::string("timed: wrong at perf_5") : std::string(); };
  f.ev.wrong_in_own_check = [](const Config& c) { return c == kBase; };
  auto r = f.Run(Input());
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_EQ(m.rfind("the original kernel does not pass its own check (mismatch): fake mismatch in the task's own test; "
                    "the original failed its timed run (runtime_error): timed: wrong at perf_5",
                    0),
            0u)
      << m;
}

// softmax_flaggems and fast_rms_layernorm (sessions 10, 17): the kernel chosen by its tunables was the
// backward, which the perf harness never runs. With kernel_chosen the run ends after the original's
// baseline, naming the kernels that ran; a kernel named by the user (kernel_chosen false) is searched.
TEST(Loop, ChosenKernelThatDidNotRunEndsAfterTheBaseline) {
  for (bool chosen : {true, false}) {
    Fixture f;
    f.o.kernel_chosen = chosen;
    OptimizeInput in = Input();
    in.kernel = "backward_kernel";  // the fake's runs record one kernel, "kernel"
    auto r = f.Run(in);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->tuned_kernel_not_run, chosen);
    if (chosen) {
      EXPECT_EQ(r->kernels_ran, (std::vector<std::string>{"kernel"}));
      EXPECT_FALSE(r->improved);
      EXPECT_EQ(r->stop_reason, "kernel not run");
      EXPECT_EQ(r->kept_reason, "'backward_kernel' did not run when the original ran the cases (the kernels that ran: kernel)");
      EXPECT_EQ(f.ev.Count(exec::Mode::kTime), 1);  // the baseline only
    } else {
      EXPECT_GT(f.ev.Count(exec::Mode::kTime), 1);
    }
  }
  // The chosen kernel ran: nothing changes.
  Fixture g;
  g.o.kernel_chosen = true;
  auto r = g.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->tuned_kernel_not_run);
  EXPECT_TRUE(r->improved);
}

// A sweep of 9 sizes (perf_0 smallest .. perf_8 largest) whose original fails at perf_{fail_from} and above
// in timed runs (issue 16's modules that fault or race at the perf harness's larger sizes). The worker's
// "@largest:K" and "@largest:K:skip:S" selectors are resolved here as tasks.py does.
class SweepMeasurer : public FakeMeasurer {
 public:
  int fail_from = 7;
  std::vector<std::string> selectors;
  SweepMeasurer() {
    for (int i = 0; i < 9; ++i) cases.push_back(fmt::format("perf_{}", i));
  }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) override {
    exec::EvalRequest q = r;
    if (q.cases.size() == 1 && q.cases[0].rfind("@largest:", 0) == 0) {
      selectors.push_back(q.cases[0]);
      int k = 0, skip = 0;
      if (std::sscanf(q.cases[0].c_str(), "@largest:%d:skip:%d", &k, &skip) < 1) return InvalidArgument("bad selector");
      q.cases.clear();
      for (int i = std::max(0, 9 - skip - k); i < 9 - skip; ++i) q.cases.push_back(fmt::format("perf_{}", i));
      if (q.cases.empty()) return InvalidArgument("worker error: task_error: no case: the task has no smaller sizes");
    }
    if (q.mode == exec::Mode::kTime && testing::ParseConfig(q.candidate_source.value_or("")) == kBase)
      for (const auto& c : q.cases)
        if (std::stoi(c.substr(5)) >= fail_from) {
          exec::EvalResult res;
          res.verdict = exec::Verdict::kRuntimeError;
          res.message = fmt::format("case {}: illegal memory access (its own fault at this size)", c);
          std::lock_guard<std::mutex> l(mu);
          calls.push_back({q.mode, kBase, q.trials, false, q.cases, false});
          return res;
        }
    return Run(q);
  }
};

// The original fails at its largest sizes (`--cases @largest:3`): the run searches and times at the next
// largest sizes where it passes, and says so; every later request uses those sizes.
// Optimize over a 9-size sweep whose original fails from perf_{fail_from} up, with `--cases @largest:3`.
Result<OptimizeResult> RunSweep(SweepMeasurer* ev, int fail_from) {
  ev->fail_from = fail_from;
  ev->time_ms = [](const Config& c, bool) { return Time(c); };
  FakeRenderer rr;
  OptimizeOptions o;
  o.budget_seconds = 1000;
  o.cases = {"@largest:3"};
  return Optimize(Input(), o, {ev, &rr});
}

TEST(Loop, OriginalFailingAtItsLargestSizesIsTunedAtTheNextOnes) {
  SweepMeasurer ev;
  auto r = RunSweep(&ev, 7);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ev.selectors, (std::vector<std::string>{"@largest:3", "@largest:3:skip:3"}));
  EXPECT_TRUE(r->improved) << r->kept_reason;
  ASSERT_EQ(r->cases.size(), 3u);
  EXPECT_EQ(r->cases[0].name, "perf_3");
  EXPECT_EQ(r->cases[2].name, "perf_5");
  bool said = false;
  for (const auto& n : r->notes)
    said = said || (n.find("fails at its 3 largest sizes") != std::string::npos &&
                     n.find("illegal memory access") != std::string::npos && n.find("perf_3, perf_4, perf_5") != std::string::npos);
  EXPECT_TRUE(said);
  for (const auto& c : ev.calls)
    if (c.mode == exec::Mode::kTime && c.cases.size() == 3 && c.cases[0] != "perf_6") {
      EXPECT_EQ(c.cases, (std::vector<std::string>{"perf_3", "perf_4", "perf_5"}));
    }
}

// Failing at every size: two smaller selections are tried, then the original's own check decides (kept).
// A failure with named cases (no @largest selector) is not retried.
TEST(Loop, OriginalFailingAtEverySizeIsKeptAfterTwoSmallerTries) {
  SweepMeasurer ev;
  auto r = RunSweep(&ev, 0);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->improved);
  EXPECT_EQ(ev.selectors, (std::vector<std::string>{"@largest:3", "@largest:3:skip:3", "@largest:3:skip:6"}));
  EXPECT_NE(r->kept_reason.find("passes its own check"), std::string::npos) << r->kept_reason;

  SweepMeasurer named;
  named.time_ms = [](const Config& c, bool) { return Time(c); };
  FakeRenderer rr;
  OptimizeOptions o;
  o.budget_seconds = 1000;
  o.cases = {"perf_7", "perf_8"};
  auto n = Optimize(Input(), o, {&named, &rr});
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_FALSE(n->improved);
  EXPECT_EQ(named.Count(exec::Mode::kTime), 1);
}

TEST(Loop, OriginalThatFailsIsAnError) {
  Fixture f;
  f.ev.wrong = [](const Config&, int) { return true; };
  auto r = f.Run(Input());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("original"), std::string::npos);
}

// --budget-seconds holds in a dry run: no check starts after it (under the interpreter one takes minutes).
TEST(Loop, DryRunStopsAtTheBudget) {
  Fixture f;
  f.ev.interpreter = true;
  f.ev.cost_s = 1.5;
  f.o.dry_run = true;
  f.o.dry_run_candidates = 4;
  f.o.budget_seconds = 2;
  auto d = f.Run(Input());
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(f.ev.Count(exec::Mode::kCheck), 2);  // the original and one candidate
  bool said = false;
  for (const auto& n : d->notes) said = said || n.find("budget ended after 1 of") != std::string::npos;
  EXPECT_TRUE(said);
}

// An original that crashes under the interpreter (--dry-run) may still run on a GPU: the error says so.
TEST(Loop, OriginalThatCrashesInTheInterpreterSaysWhy) {
  Fixture f;
  f.ev.crashes = [](const Config&) { return true; };
  auto gpu = f.Run(Input());
  ASSERT_FALSE(gpu.ok());
  EXPECT_NE(gpu.status().message().find("does not pass its own check (crash)"), std::string::npos);
  EXPECT_EQ(gpu.status().message().find("interpreter"), std::string::npos) << gpu.status().message();
  f.ev.interpreter = true;
  f.o.dry_run = true;
  auto dry = f.Run(Input());
  ASSERT_FALSE(dry.ok());
  EXPECT_NE(dry.status().message().find("under Triton's interpreter"), std::string::npos) << dry.status().message();
}

TEST(Loop, EmitAutotuneListsVerifiedConfigs) {
  Fixture f;
  f.o.emit_autotune = true;
  f.o.patience = 100;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->improved);
  EXPECT_EQ(r->autotune_source.rfind("# autotune\n" + RenderConfig(kBest), 0), 0u) << r->autotune_source;
}

TEST(Loop, CasesOptionLimitsEveryRequest) {
  // --cases: the baseline, the search and the verification's timing all use only the named cases (the
  // winner's own correctness check still runs the task's default cases: correctness, not timing).
  Fixture f;
  f.o.cases = {"large"};
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->cases.size(), 1u);
  EXPECT_EQ(r->cases[0].name, "large");
  ASSERT_FALSE(f.ev.calls.empty());
  int own_checks = 0;
  for (const auto& c : f.ev.calls) {
    if (c.mode == exec::Mode::kCheck && c.cases.empty()) {
      ++own_checks;
      continue;
    }
    if (c.mode != exec::Mode::kCompile) {
      EXPECT_EQ(c.cases, (std::vector<std::string>{"large"}));
    }
  }
  EXPECT_GE(own_checks, 1);
}

class FakeProfiler : public Profiler {
 public:
  double fraction = 0.3;
  std::vector<std::string> moves = {"bigger_tiles", "more_warps", "split_k"};  // the finding's
  int calls = 0;
  std::vector<std::string> profiled_cases;
  Status available = Status::Ok();
  Status Available() override { return available; }
  Result<ProfileSummary> Profile(const task::TaskSpec&, const std::optional<std::string>& src,
                                 const std::string& case_name) override {
    profiled_cases.push_back(case_name);
    ++calls;
    ProfileSummary p;
    p.bound = "memory";
    Config c = testing::ParseConfig(src.value_or(""));
    p.roofline_fraction = c.empty() || !c.count("BLOCK_SIZE") ? fraction : fraction * Time(kBase) / Time(c);
    p.findings.push_back({"memory_bound_headroom", "info", "memory-bound at 30%", moves});
    p.kernel_shares = shares;
    return p;
  }
  void LimitSeconds(double seconds) override { limits.push_back(seconds); }
  void SeedAutotune(const nlohmann::json& picks) override { seeded.push_back(picks); }
  std::map<std::string, double> shares;
  std::vector<double> limits;          // each LimitSeconds, in order
  std::vector<nlohmann::json> seeded;  // each SeedAutotune, in order
};

TEST(Loop, ProfiledRunUsesMovesAndReportsRoofline) {
  Fixture f;
  FakeProfiler prof;
  f.o.patience = 100;
  auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->mode, "profiled");
  EXPECT_EQ(r->strategy, "rules");
  EXPECT_EQ(prof.calls, 2);  // before and after
  // Both profiles are of the original's slowest case (the fake's "large" runs 4x "small").
  EXPECT_EQ(prof.profiled_cases, (std::vector<std::string>{"large", "large"}));
  EXPECT_NEAR(r->roofline_before, 0.3, 1e-9);
  EXPECT_GT(r->roofline_after, r->roofline_before);
  bool noted = false;
  for (auto& n : r->notes) noted |= n.find("split_k") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NE(FormatReportText(*r).find("roofline"), std::string::npos);
}

// A long slowest case is not the one profiled (ncu replays the kernel dozens of times: an 89 ms case ran its
// profile out of time): the slowest case up to profile_case_max_ms is, else the fastest, with a note; a
// slowest case within the limit is profiled as before. The fake's "small" runs 1.1 ms, "large" 4.4 ms.
TEST(Loop, ProfilesAShorterCaseWhenTheSlowestIsLong) {
  struct Case {
    double max_ms;
    std::string profiled;
    bool noted;
  };
  for (const Case& c :
       {Case{2.0, "small", true}, Case{0.5, "small", true}, Case{10.0, "large", false}, Case{0.0, "large", false}}) {
    Fixture f;
    FakeProfiler prof;
    f.o.profile_case_max_ms = c.max_ms;
    auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_FALSE(prof.profiled_cases.empty());
    for (const auto& p : prof.profiled_cases) EXPECT_EQ(p, c.profiled) << c.max_ms;
    bool noted = false;
    for (const auto& n : r->notes)
      noted |= n.find("profiled case small (1.1 ms), not the slowest large (4.4 ms)") != std::string::npos;
    EXPECT_EQ(noted, c.noted) << c.max_ms;
  }
}

// Compile workers build the search's inputs on the GPU beside the measuring worker: no more of them than the
// original's peak GPU memory fits (0.85 of the GPU, the measuring worker's share first), with a note; none at
// all when only the measuring worker fits; as asked when the worker reports no memory.
TEST(Loop, CompileWorkersAreAsManyAsTheGpuMemoryHolds) {
  struct Case {
    double peak_gib, gpu_gib;
    int jobs;
    std::string note;
  };
  for (const Case& c :
       {Case{30, 141, 2,
             "2 compile worker(s) of 4 (--compile-jobs): the original's run peaked at "
             "30.0 GiB of GPU memory"},
        Case{62.5, 80, 0, "candidates compile in their own measurement"}, Case{1, 141, 4, ""}, Case{0, 0, 4, ""}}) {
    Fixture f;
    f.o.compile_jobs = 4;
    f.o.patience = 100;
    f.ev.peak_gib = c.peak_gib;
    f.ev.gpu_gib = c.gpu_gib;
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->improved) << c.peak_gib;
    for (int j : f.ev.compile_jobs_asked) EXPECT_EQ(j, c.jobs) << c.peak_gib;
    EXPECT_EQ(f.ev.Count(exec::Mode::kCompile) > 0, c.jobs > 0) << c.peak_gib;
    bool noted = false;
    for (const auto& n : r->notes) noted |= n.find("compile worker(s) of 4") != std::string::npos;
    EXPECT_EQ(noted, !c.note.empty()) << c.peak_gib;
    if (!c.note.empty()) {
      bool found = false;
      for (const auto& n : r->notes) found |= n.find(c.note) != std::string::npos;
      EXPECT_TRUE(found) << c.peak_gib;
    }
  }
}

// The kernel chosen by its tunables ran, but another kernel of the module takes most of the profiled case's
// GPU time: a note names it (one kernel is tuned per run); not when the user named the kernel, and not when
// the tuned kernel takes the larger share.
TEST(Loop, NotesTheModulesKernelThatTakesMostOfTheTime) {
  struct Case {
    bool chosen;
    double tuned, other;
    bool noted;
  };
  for (const Case& c : {Case{true, 0.1, 0.85, true}, Case{false, 0.1, 0.85, false}, Case{true, 0.6, 0.4, false},
                        Case{true, 0.3, 0.45, false}}) {
    Fixture f;
    FakeProfiler prof;
    prof.shares = {{"kernel", c.tuned}, {"other_kernel", c.other}, {"torch_copy", 1.0 - c.tuned - c.other}};
    f.o.kernel_chosen = c.chosen;
    OptimizeInput in = Input();
    in.launched_kernels = {"kernel", "other_kernel"};
    auto r = Optimize(in, f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::string note;
    for (const auto& n : r->notes)
      if (n.find("of the profiled case's GPU time") != std::string::npos) note = n;
    if (c.noted)
      EXPECT_EQ(note,
                "'other_kernel' takes 85% of the profiled case's GPU time and the tuned 'kernel' 10%: --kernel "
                "other_kernel tunes it");
    else
      EXPECT_EQ(note, "") << c.chosen << " " << c.tuned << " " << c.other;
  }
}

// A profiler that cannot run here is never called; its reason is the run's measure-only note.
TEST(Loop, UnavailableProfilerMeansMeasureOnlyWithItsReason) {
  Fixture f;
  FakeProfiler prof;
  prof.available = Unavailable("ncu not found (no ncu on PATH); measuring only");
  auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->mode, "measure-only");
  EXPECT_EQ(r->mode_note, "ncu not found (no ncu on PATH); measuring only");
  EXPECT_EQ(prof.calls, 0);
  Fixture g;
  auto none = g.Run(Input());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->mode_note, "no profiler configured");
}

// A profile costs 15 s of the fake clock. The winner is profiled only while the budget has room;
// otherwise its roofline position is estimated from the profiled case's verified speedup.
class SlowProfiler : public FakeProfiler {
 public:
  double* clock = nullptr;
  Result<ProfileSummary> Profile(const task::TaskSpec& t, const std::optional<std::string>& src,
                                 const std::string& case_name) override {
    *clock += 15;
    return FakeProfiler::Profile(t, src, case_name);
  }
};

TEST(Loop, WinnerProfiledOnlyWhenTheBudgetHasRoom) {
  for (bool force : {false, true}) {
    Fixture f;
    SlowProfiler prof;
    prof.clock = &f.clock;
    f.o.budget_seconds = 30;
    f.o.profile_winner_always = force;
    auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->improved) << r->kept_reason;
    EXPECT_EQ(prof.calls, force ? 2 : 1);
    EXPECT_EQ(r->roofline_after_estimated, !force);
    EXPECT_GT(r->roofline_after, r->roofline_before);
    if (!force) {
      EXPECT_LE(r->wall_s, 30.0);
      double sp = 0;
      for (const auto& c : r->cases)
        if (c.name == "large") sp = c.speedup;
      EXPECT_NEAR(r->roofline_after, r->roofline_before * sp, 1e-9);
      EXPECT_NE(FormatReportText(*r).find("estimated"), std::string::npos);
    }
  }
}

// bgmv_expand_slice (session 17): 76% of roofline by its counters (its DRAM bytes were mostly spilled
// registers), 69.6x faster on the profiled case: an estimate of 5323% was printed. Past 100% no estimate
// is given; a note says what the verified speedup bounds.
TEST(Loop, RooflineEstimateAboveTheRoofIsNotGiven) {
  for (double before : {0.05, 0.99}) {
    Fixture f;
    SlowProfiler prof;
    prof.clock = &f.clock;
    prof.fraction = before;
    f.o.budget_seconds = 30;
    f.o.roofline_stop = 2.0;  // searched whatever the counters say
    auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->improved) << r->kept_reason;
    double sp = 0;
    for (const auto& c : r->cases)
      if (c.name == "large") sp = c.speedup;
    ASSERT_GT(sp, 1.02);  // so that 0.99 x sp is above the roof and 0.05 x sp below it
    ASSERT_LT(sp, 20.0);
    bool noted = false;
    for (const auto& n : r->notes) noted = noted || n.find("roofline after not estimated") != std::string::npos;
    if (before * sp <= 1.0) {
      EXPECT_TRUE(r->roofline_after_estimated);
      EXPECT_NEAR(r->roofline_after, before * sp, 1e-9);
      EXPECT_FALSE(noted);
    } else {
      EXPECT_FALSE(r->roofline_after_estimated);
      EXPECT_LT(r->roofline_after, 0);
      EXPECT_TRUE(noted);
      EXPECT_EQ(FormatReportText(*r).find("% after (estimated"), std::string::npos) << FormatReportText(*r);
    }
  }
}

TEST(Loop, SearchLeavesRoomForVerification) {
  // Each timed request costs 2 s: three long verification runs are costed at 3 x 3 x 2 s + 1 s = 19 s,
  // so the search ends by 60 - 19 = 41 s and the whole run stays within the 60 s budget.
  Fixture f;
  f.ev.cost_s = 2;
  f.o.budget_seconds = 60;
  f.o.patience = 100;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->reserve_s, 19.0, 1e-9);
  for (const auto& c : r->candidates)
    if (!c.finalist && c.id > 0 && c.verdict == "ok") {
      EXPECT_LE(c.at_s, 41.0);
    }
  EXPECT_LE(r->wall_s, 60.0 + 2.0);
}

TEST(Loop, UndersizedBlockIsGrownFirst) {
  // BLOCK_SIZE=16 (TritonBench's add_example launches 4): the first round goes straight to the block
  // nearest 1024 and one step up, before the diagnosis's own moves; the report says why.
  Fixture f;
  FakeProfiler prof;
  f.o.batch = 3;
  f.o.tuned_seeds = false;  // without the seeds (1024/4 first), the growth move leads
  const Config small{{"BLOCK_SIZE", 16}, {"num_warps", 4}, {"num_stages", 3}};
  auto r = Optimize(Input(small), f.o, {&f.ev, &f.rr, &prof});
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->candidates.size(), 3u);
  EXPECT_EQ(r->candidates[1].config.at("BLOCK_SIZE"), 1024);
  EXPECT_EQ(r->candidates[2].config.at("BLOCK_SIZE"), 32);
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("BLOCK_SIZE=16 is far below") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(r->improved);
}

class SmallGridProfiler : public FakeProfiler {
 public:
  Result<ProfileSummary> Profile(const task::TaskSpec& t, const std::optional<std::string>& src,
                                 const std::string& case_name) override {
    auto p = FakeProfiler::Profile(t, src, case_name);
    if (p.ok()) p->findings = {{"small_grid", "warning", "16 programs for 132 SMs", {"smaller_tiles"}}};
    return p;
  }
};

TEST(Loop, UndersizedBlockOfASmallGridIsNotGrown) {
  // BLOCK_SIZE=32 with a grid that does not fill the GPU (the diagnosis asks for smaller tiles), each
  // halving of the block faster (more programs): the first move is the smaller tile, not the growth to
  // 1024 (nor the tuned 1-D seeds of 1024-4096); 4 and 8, below the space's floor of 16, join the
  // values and the search reaches 4; the report says why.
  Fixture f;
  SmallGridProfiler prof;
  f.o.batch = 1;
  f.o.patience = 100;
  f.ev.time_ms = [](const Config& c, bool) { return static_cast<double>(c.at("BLOCK_SIZE")); };
  const Config small{{"BLOCK_SIZE", 32}, {"num_warps", 4}, {"num_stages", 3}};
  auto r = Optimize(Input(small), f.o, {&f.ev, &f.rr, &prof});
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->candidates.size(), 2u);
  EXPECT_EQ(r->candidates[1].config.at("BLOCK_SIZE"), 16);
  for (const auto& c : r->candidates) EXPECT_LE(c.config.at("BLOCK_SIZE"), 32) << ConfigKey(c.config);
  EXPECT_EQ(r->space.Find("BLOCK_SIZE")->values.front(), 4);
  ASSERT_TRUE(r->improved) << r->kept_reason;
  EXPECT_EQ(r->best_config.at("BLOCK_SIZE"), 4);
  bool noted = false, joined = false;
  for (const auto& n : r->notes) {
    EXPECT_EQ(n.find("far below"), std::string::npos) << n;
    noted |= n.find("BLOCK_SIZE=32 is below the block sizes 1-D kernels are tuned at, but the diagnosis asks for "
                    "smaller tiles") != std::string::npos;
    joined |= n.find("BLOCK_SIZE: the grid does not fill the GPU (the diagnosis asks for smaller tiles): 4 to 8 "
                     "join its values") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  EXPECT_TRUE(joined);
}

TEST(Loop, GemmSearchMeasuresTheTunedTilesFirst) {
  // A GEMM written with 32x32x32 tiles whose fastest config is 128x256x64/8 warps/3 stages (two seeds
  // away, many coordinate steps away): the seeds are the first configs timed after the baseline, and
  // the winner is the seed.
  Fixture f;
  OptimizeInput in;
  in.task.name = "fake/gemm";
  in.kernel = "matmul";
  in.space = Space({{"BLOCK_M", Role::kBlockM, {32, 64, 128, 256}, false},
                    {"BLOCK_N", Role::kBlockN, {32, 64, 128, 256}, false},
                    {"BLOCK_K", Role::kBlockK, {32, 64}, false},
                    {"num_warps", Role::kNumWarps, {2, 4, 8}, true},
                    {"num_stages", Role::kNumStages, {2, 3, 4, 5}, true}});
  in.baseline = {{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"num_warps", 4}, {"num_stages", 2}};
  in.original_source = RenderConfig(in.baseline);
  const Config opt{{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}, {"num_warps", 8}, {"num_stages", 3}};
  f.ev.time_ms = [opt](const Config& c, bool) { return c == opt ? 1.0 : 4.0; };
  f.o.strategy = "coordinate";
  f.o.max_evals = 8;
  auto r = f.Run(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(r->candidates.size(), 3u);
  EXPECT_EQ(ConfigKey(r->candidates[1].config), "BLOCK_K=64 BLOCK_M=128 BLOCK_N=128 num_stages=3 num_warps=8");
  EXPECT_EQ(ConfigKey(r->candidates[2].config), ConfigKey(opt));
  EXPECT_TRUE(r->improved);
  EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(opt));
}

// The diagnosis asks for smaller tiles (registers spilled at 128x128): the tuned seeds with a smaller tile area are
// timed first; without that move the first seed is 128x128 at 8 warps.
TEST(Loop, RegisterPressureTimesTheSmallerTileSeedsFirst) {
  for (bool smaller : {true, false}) {
    Fixture f;
    FakeProfiler prof;
    if (smaller) prof.moves = {"smaller_tiles", "more_warps"};
    OptimizeInput in;
    in.task.name = "fake/attention";
    in.kernel = "attn";
    in.space = Space({{"BLOCK_M", Role::kBlockM, {32, 64, 128, 256}, false},
                      {"BLOCK_N", Role::kBlockN, {32, 64, 128, 256}, false},
                      {"num_warps", Role::kNumWarps, {2, 4, 8}, true},
                      {"num_stages", Role::kNumStages, {1, 2, 3, 4}, true}});
    in.baseline = {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"num_warps", 4}, {"num_stages", 1}};
    in.original_source = RenderConfig(in.baseline);
    f.ev.time_ms = [](const Config& c, bool) {
      return c.count("BLOCK_M") && c.at("BLOCK_M") * c.at("BLOCK_N") < 128 * 128 ? 1.0 : 2.0;
    };
    f.o.strategy = "coordinate";
    f.o.max_evals = 4;
    auto r = Optimize(in, f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_GE(r->candidates.size(), 2u);
    const Config& first = r->candidates[1].config;
    if (smaller)
      EXPECT_EQ(ConfigKey(first), "BLOCK_M=64 BLOCK_N=128 num_stages=4 num_warps=4");
    else
      EXPECT_EQ(ConfigKey(first), "BLOCK_M=128 BLOCK_N=128 num_stages=3 num_warps=8");
  }
}

// A block that is one side of a 2-D tile (fused_recurrent_rwkv6: `b_h = tl.zeros([BV, BK])`, BV=32 beside BK=32 set by
// its wrapper) is not a small 1-D block: not grown first, its 1-D seeds hold 1024-4096 elements in the tile (on an
// H200 the seed BV=1024 ran 25x slower than the original and the search's 20 s went on it and BV=2048), and values
// whose tile passes 16384 elements leave the space.
TEST(Loop, ABlockThatIsOneSideOfATileIsSeededByTheTilesElements) {
  for (bool tiled : {true, false}) {
    Fixture f;
    FakeProfiler prof;
    OptimizeInput in;
    in.task.name = "fake/recurrent";
    in.kernel = "kernel";
    Param bv{"BV", Role::kBlock, {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}, false};
    if (tiled) bv.tiles = {{"BV", "BK"}};
    in.space = Space({bv,
                      {"num_warps", Role::kNumWarps, {1, 2, 4, 8, 16}, true},
                      {"num_stages", Role::kNumStages, {1, 2, 3, 4}, true}});
    in.baseline = {{"BV", 32}, {"num_warps", 1}, {"num_stages", 1}};
    in.original_source = RenderConfig(in.baseline);
    f.ev.constexprs = {{"BK", 32}, {"BV", 32}, {"USE_INITIAL_STATE", false}};
    f.ev.time_ms = [](const Config& c, bool) { return c.count("BV") ? 1.0 + c.at("BV") / 64.0 : 2.0; };
    f.o.strategy = "coordinate";
    f.o.max_evals = 5;
    auto r = Optimize(in, f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_GE(r->candidates.size(), 3u);
    auto has_note = [&](const std::string& s) {
      return std::any_of(r->notes.begin(), r->notes.end(),
                         [&](const std::string& n) { return n.find(s) != std::string::npos; });
    };
    if (tiled) {
      EXPECT_EQ(ConfigKey(r->candidates[1].config), "BV=32 num_stages=1 num_warps=4");
      EXPECT_EQ(ConfigKey(r->candidates[2].config), "BV=64 num_stages=1 num_warps=8");
      EXPECT_TRUE(has_note("BV=32 is one side of a tile of 1024 elements ([BV=32, BK=32])"));
      EXPECT_TRUE(has_note("BV: values above 512 left out: one side of the tile [BV=32, BK=32]"));
      EXPECT_FALSE(has_note("far below"));
      EXPECT_EQ(r->space.Find("BV")->values.back(), 512);
      for (const auto& c : r->candidates) EXPECT_LE(c.config.at("BV"), 512) << ConfigKey(c.config);
    } else {
      EXPECT_EQ(ConfigKey(r->candidates[1].config), "BV=1024 num_stages=1 num_warps=4");
      EXPECT_TRUE(has_note("BV=32 is far below"));
      EXPECT_EQ(r->space.Find("BV")->values.back(), 8192);
    }
  }
}

// Time relative to the original's, cubed: "large" runs 4 x this (kBest 10.6x faster than the original).
double Rel(const Config& c) { return std::pow(Time(c) / Time(kBase), 3.0); }

// A search whose candidates win on "large" (4 x Rel) and take `small_ms` on "small" (the original 1.0),
// with the per-shape fallback on or off.
Result<OptimizeResult> RunSplitCases(bool per_shape, std::function<double(const Config&)> small_ms) {
  Fixture f;
  f.o.patience = 100;
  f.o.per_shape_fallback = per_shape;
  f.ev.case_ms = [small_ms](const Config& c, const std::string& name) {
    if (name == "large") return 4.0 * Rel(c);
    return c == kBase ? 1.0 : small_ms(c);
  };
  return f.Run(Input());
}

TEST(Loop, SplitFinalistBecomesAPerShapeAutotune) {
  // The optimum is 2x faster on "large" but 1.5x slower on "small": no finalist passes alone; the
  // autotune over it and the original wins both cases (each runs its faster config).
  for (bool enabled : {true, false}) {
    // "small": every config but the original 3 x Time (kBest 1.5, 1.5x slower).
    auto r = RunSplitCases(enabled, [](const Config& c) { return 3.0 * Time(c); });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->improved, enabled) << r->kept_reason;
    if (!enabled) continue;
    EXPECT_TRUE(r->best_is_autotune);
    EXPECT_EQ(ParseConfigs(r->best_source).size(), 2u);
    ASSERT_EQ(r->cases.size(), 2u);
    for (const auto& c : r->cases) {
      if (c.name == "large")
        EXPECT_NEAR(c.speedup, 1.0 / Rel(kBest), 1e-6);
      else
        EXPECT_NEAR(c.speedup, 1.0, 1e-6);
    }
    EXPECT_TRUE(r->ToJson().at("best_is_autotune").get<bool>());
  }
}

// The autotune's own benchmark can pick otherwise than kiln measured (on an H200, rms_rbe_matmul's per-shape
// autotune ran its finalist at 0.966x on a 9 us size, beside 10.8x and 4.1x): the autotune that runs its first
// config everywhere loses "small" like the finalist; the shapes it met (the worker's per-case autotune keys)
// are then pinned, "small" to the original's config and "large" to the finalist, and that module wins.
TEST(Loop, PerShapeAutotunePinsTheShapesKilnMeasured) {
  Fixture f;
  f.o.patience = 100;
  f.ev.autotune_runs_first = true;
  f.ev.case_ms = [](const Config& c, const std::string& name) {
    if (name == "large") return 4.0 * Rel(c);
    return c == kBase ? 1.0 : 3.0 * Time(c);
  };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->improved) << r->kept_reason;
  EXPECT_TRUE(r->best_is_autotune);
  EXPECT_EQ(r->best_origin, "per-shape autotune, measured shapes pinned");
  EXPECT_NE(r->best_source.find("# kiln-pin [1]:rest\n"), std::string::npos) << r->best_source;
  EXPECT_NE(r->best_source.find("# kiln-pin [4]:first\n"), std::string::npos) << r->best_source;
  bool unpinned_rejected = false;
  for (const auto& c : r->candidates)
    unpinned_rejected |=
        c.origin == "per-shape autotune" && c.final_outcome.find("case small is slower") != std::string::npos;
  EXPECT_TRUE(unpinned_rejected);
  for (const auto& c : r->cases) {
    if (c.name == "large")
      EXPECT_NEAR(c.speedup, 1.0 / Rel(kBest), 1e-6);
    else
      EXPECT_NEAR(c.speedup, 1.0, 1e-6);
  }
  // Without the worker's keys nothing is pinned: the original is kept, and the report says why.
  Fixture g;
  g.o.patience = 100;
  g.ev.autotune_runs_first = true;
  g.ev.report_autotune_keys = false;
  g.ev.case_ms = f.ev.case_ms;
  auto k = g.Run(Input());
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_FALSE(k->improved);
  bool said = false;
  for (const auto& n : k->notes) said |= n.find("no shape to pin") != std::string::npos;
  EXPECT_TRUE(said);
}

// A case slower than the original in every round is not declared, even within case_slack (issue 21: no
// kernel slower than its original; swiglu_triton won at 0.997x on one case, every round below 1): the
// optimum is 10x faster on "large" and 0.985x on "small" (rounds 0.975-0.995). With the per-shape fallback
// the autotune over it and the original wins, each shape at least as fast as before; without, the original
// is kept.
TEST(Loop, CaseSlowerInEveryRoundIsNotDeclared) {
  for (bool enabled : {true, false}) {
    auto r = RunSplitCases(enabled, [](const Config&) { return 1.0 / 0.985; });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->improved, enabled) << r->kept_reason;
    bool said = false;
    for (const auto& c : r->candidates)
      said = said || c.final_outcome.find("slower than the original in every round") != std::string::npos;
    EXPECT_TRUE(said);
    if (!enabled) continue;
    EXPECT_TRUE(r->best_is_autotune);
    for (const auto& c : r->cases) EXPECT_GE(c.speedup, 1.0 - 1e-9) << c.name;
  }
}

// A finalist is judged against the original as it runs on its own (JudgeAgainstOriginalAlone). On an H200 an
// autotuned original ran 3.8x (chunk_delta_fwd) and 21x (max_reduction) slower beside finalists than in
// its own timed run, and finalists no faster than it, or slower, measured 3.8x and 15x there. Here the
// original runs 4x slower beside a finalist on "small" only: the optimum (2.2x alone on both cases) is
// declared at 2.2x on both, not 8.8x, and the report says why.
TEST(Loop, OriginalSlowerOnlyBesideAFinalistIsJudgedAsAlone) {
  for (bool rule : {true, false}) {
    Fixture f;
    f.o.strategy = "coordinate";
    f.o.patience = 100;
    if (!rule) f.o.reference_drift = 1e9;  // the rule off: the side-by-side ratio as measured
    f.ev.baseline_beside = [](const std::string& name) { return name == "small" ? 4.0 : 1.0; };
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->improved) << r->kept_reason;
    EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(kBest));
    for (const auto& c : r->cases)
      EXPECT_NEAR(c.speedup, (c.name == "small" && !rule ? 4.0 : 1.0) * Time(kBase) / Time(kBest), 1e-6) << c.name;
    bool said = false;
    for (const auto& n : r->notes) said |= n.find("case small: the original ran") != std::string::npos;
    EXPECT_EQ(said, rule);
  }
}

// The same slowdown hiding a loss: every finalist is 0.8x on "small" alone, and beside it the original
// runs 3x slower there (2.4x measured). Judged as alone, no finalist passes and the original is kept.
TEST(Loop, OriginalSlowerOnlyBesideAFinalistHidesNoLoss) {
  Fixture f;
  f.o.patience = 100;
  f.o.per_shape_fallback = false;
  f.ev.case_ms = [](const Config& c, const std::string& name) {
    if (name == "large") return 4.0 * Rel(c);
    return c == kBase ? 1.0 : 1.25;
  };
  f.ev.baseline_beside = [](const std::string& name) { return name == "small" ? 3.0 : 1.0; };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->improved);
  bool said = false;
  for (const auto& c : r->candidates) said |= c.final_outcome.find("case small is slower") != std::string::npos;
  EXPECT_TRUE(said);
}

// Both slower side by side (on an H200 reversed_cumsum_scalar's original and finalist each ran 1.6-1.8x
// slower beside each other than alone): the side-by-side ratio is fair and stands.
TEST(Loop, BothSlowerBesideEachOtherIsFair) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 100;
  f.ev.baseline_beside = [](const std::string&) { return 1.7; };
  f.ev.candidate_beside = [](const std::string&) { return 1.7; };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->improved) << r->kept_reason;
  for (const auto& c : r->cases) EXPECT_NEAR(c.speedup, Time(kBase) / Time(kBest), 1e-6) << c.name;
  for (const auto& n : r->notes) EXPECT_EQ(n.find("the original ran"), std::string::npos) << n;
}

// A consistent gap smaller than tie_band (0.2%) is a tie, not a slower case: on an H200 the original's own
// config measured 0.999x in every round against the original. 0.999x in every round is declared; 0.997x
// in every round (swiglu_triton's case) is not.
TEST(Loop, GapWithinTheTieBandIsNotSlower) {
  for (double ratio : {0.999, 0.997, 0.9995}) {
    Fixture f;
    f.o.patience = 100;
    const bool no_band = ratio == 0.9995;  // without the band any consistent gap is slower
    if (no_band) f.o.tie_band = 0;
    f.o.per_shape_fallback = false;
    f.ev.spread = 0.0005;  // every round within 0.05% of the median: below 1 in every round
    f.ev.case_ms = [ratio](const Config& c, const std::string& name) {
      if (name == "large") return 4.0 * Rel(c);
      return c == kBase ? 1.0 : 1.0 / ratio;
    };
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->improved, ratio > 0.998 && !no_band) << ratio << ": " << r->kept_reason;
    bool said = false;
    for (const auto& c : r->candidates)
      said = said || c.final_outcome.find("slower than the original in every round") != std::string::npos;
    EXPECT_EQ(said, ratio < 0.998 || no_band) << ratio;
  }
}

// Rounds that time nothing (every config pruned or failed to compile) do not count against the patience:
// on an H200 context_attn_llama's search stopped 8 s into its 20 s budget after rounds whose configs were
// mostly over the shared-memory limit. Here no block size above the original's compiles.
TEST(Loop, RoundsThatTimeNothingDoNotCountAgainstPatience) {
  Fixture f;
  f.o.strategy = "coordinate";
  f.o.patience = 2;
  f.o.batch = 2;
  f.ev.time_ms = [](const Config& c, bool) {
    return c.at("BLOCK_SIZE") > 64 ? std::numeric_limits<double>::quiet_NaN() : Time(c);
  };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->improved) << r->kept_reason << " / " << r->stop_reason;
  EXPECT_EQ(r->best_config.at("BLOCK_SIZE"), 64);
}

// The autotune picks a trusted response reports go with kiln's next trusted requests (a restarted worker does
// not tune the original again), the latest table per kernel; the first request carries none.
TEST(Loop, TrustedResponsesAutotunePicksGoWithTheNextRequests) {
  Fixture f;
  f.o.patience = 100;
  f.ev.report_picks = true;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(f.ev.calls.size(), 3u);
  EXPECT_TRUE(f.ev.calls[0].autotune_picks.empty());
  size_t carried = 0;
  for (size_t i = 1; i < f.ev.calls.size(); ++i) {
    const auto& p = f.ev.calls[i].autotune_picks;
    if (f.ev.calls[i].mode == exec::Mode::kCompile) continue;
    ASSERT_EQ(p.size(), 1u) << i;  // one kernel: its table replaced, not appended
    EXPECT_EQ(p[0]["id"], "orig");
    ++carried;
  }
  EXPECT_GE(carried, 2u);
}

// The profiles run the original with the autotune picks its timed runs reported (ncu's worker is a process of
// its own: tuning there again, the original could profile another config than the one timed).
TEST(Loop, ProfilesGetTheAutotunePicksOfTheTimedRuns) {
  Fixture f;
  FakeProfiler prof;
  f.o.patience = 100;
  f.ev.report_picks = true;
  auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(prof.calls, 2);
  ASSERT_EQ(prof.seeded.size(), 2u);  // before each profile
  for (const auto& p : prof.seeded) {
    ASSERT_EQ(p.size(), 1u) << p.dump();
    EXPECT_EQ(p[0]["id"], "orig");
  }
}

TEST(Loop, StopsAtRoofline) {
  Fixture f;
  FakeProfiler prof;
  prof.fraction = 0.96;
  auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->improved);
  EXPECT_EQ(r->stop_reason, "at roofline");
  EXPECT_EQ(r->measured, 1);
}

TEST(Loop, MachineryFailureAfterTheOriginalKeepsIt) {
  // The worker cannot start for a candidate (after the original ran): the original is kept with the
  // machinery's error as the reason (issue 21: never fail where the original runs); no candidate gets a
  // crash verdict for it.
  for (bool compile : {false, true}) {
    Fixture f;
    f.o.compile_jobs = compile ? 2 : 0;
    f.ev.machinery_fails = [compile](const exec::EvalRequest& r) {
      if (compile) return r.mode == exec::Mode::kCompile;
      return r.mode == exec::Mode::kTime && !(testing::ParseConfig(r.candidate_source.value_or("")) == kBase);
    };
    auto r = f.Run(Input());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->improved);
    EXPECT_EQ(r->best_source, Input().original_source);
    EXPECT_EQ(r->kept_reason.rfind("original kept, because the loop failed: ", 0), 0u) << r->kept_reason;
    EXPECT_NE(r->kept_reason.find("cannot start the worker"), std::string::npos) << r->kept_reason;
    EXPECT_NE(r->kept_reason.find(compile ? "the compile workers failed" : "the measuring machinery failed"),
              std::string::npos)
        << r->kept_reason;
    for (const auto& c : r->candidates) EXPECT_NE(c.verdict, "crash");
  }
  // The worker never starts: no run at all.
  Fixture f;
  f.ev.machinery_fails = [](const exec::EvalRequest&) { return true; };
  auto r = f.Run(Input());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
}


// A compile worker whose task harness fails building the search's inputs (layernorm_fwd_triton, session 17:
// out of memory at its largest sizes beside the measuring worker) does not end the loop: the candidates are
// measured without a compile ahead, later rounds send no compile, and the search still finds the winner.
TEST(Loop, CompileWorkerFailingInTheTaskTurnsCompilesOff) {
  Fixture f;
  f.o.compile_jobs = 2;
  f.o.patience = 100;
  std::atomic<int> compiles{0};
  f.ev.task_error = [&compiles](const exec::EvalRequest& r) {
    if (r.mode == exec::Mode::kCompile) ++compiles;
    return r.mode == exec::Mode::kCompile
               ? std::string("kernels/x.py: the performance harness's inputs (case 'large') raised OutOfMemoryError")
               : std::string();
  };
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->improved) << r->kept_reason;
  EXPECT_EQ(r->best_config, kBest);
  int notes = 0;
  for (const auto& n : r->notes) notes += n.find("compile workers turned off") != std::string::npos;
  EXPECT_EQ(notes, 1);
  EXPECT_EQ(r->compiled, 0);
  // Compiles were sent for the first round only.
  EXPECT_GE(compiles.load(), 1);
  EXPECT_LT(compiles.load(), r->measured - 1);
  // A failure of the machinery in a compile worker still ends the loop (MachineryFailureAfterTheOriginalKeepsIt).
}

TEST(Loop, OriginalWhoseTaskFailsToLoadIsATaskErrorNotTheMachinerys) {
  // triton_linear_activation on triton 3.6: its reference imports triton.ops, which is gone. `kiln eval`
  // says "task error: ..."; so does the loop, without calling it the measuring machinery's failure.
  Fixture f;
  f.ev.task_error = [](const exec::EvalRequest&) {
    return std::string(
        "kernels/x.py: importing the task's reference raised ModuleNotFoundError: No module named "
        "'triton.ops' (at x.py:9)");
  };
  auto r = f.Run(Input());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("task error: kernels/x.py: importing the task's reference raised", 0), 0u)
      << r.status().message();
  EXPECT_EQ(r.status().message().find("machinery"), std::string::npos) << r.status().message();
}

// ---- issue 21: the budget is the search's, a slow candidate is cut, the run has a hard end ----------------

// A measurer whose requests cost fake-clock time by config: `slow` configs take `slow_s` unless the request's
// timeout cuts them (then the worker answers "timeout" at the timeout, as kiln_worker does). Records every
// request's timeout and the time it started.
class TimedMeasurer : public FakeMeasurer {
 public:
  std::function<bool(const Config&)> slow = [](const Config&) { return false; };
  // Configs whose compile outlasts any deadline (answered "timeout" at once: compiles run on another thread).
  std::function<bool(const Config&)> slow_compile = [](const Config&) { return false; };
  double slow_s = 96;
  std::vector<std::pair<double, double>> started_and_timeout;  // (clock at the start, timeout_s)
  std::map<std::string, double> compile_timeout;               // ConfigKey -> its compile request's timeout_s
  exec::EvalResult Run(const exec::EvalRequest& r) override {
    Config cfg = testing::ParseConfig(r.candidate_source.value_or(""));
    {
      std::lock_guard<std::mutex> l(mu);
      started_and_timeout.push_back({*clock, r.timeout_s});
      if (r.mode == exec::Mode::kCompile) compile_timeout[ConfigKey(cfg)] = r.timeout_s;
    }
    if (r.mode == exec::Mode::kCompile && slow_compile(cfg))
      return exec::EvalResult::Make(exec::Verdict::kTimeout, "timeout", "killed after the request's timeout");
    if (r.mode != exec::Mode::kCompile && slow(cfg) && r.timeout_s < slow_s) {
      *clock += r.timeout_s;
      return exec::EvalResult::Make(exec::Verdict::kTimeout, "timeout", "killed after the request's timeout");
    }
    if (r.mode != exec::Mode::kCompile && slow(cfg)) *clock += slow_s - cost_s;
    return FakeMeasurer::Run(r);
  }
};

struct TimedFixture : Fixture {
  TimedMeasurer tm;
  TimedFixture() {
    tm.time_ms = ev.time_ms;
    tm.clock = &clock;
    tm.cost_s = 2;
  }
  Result<OptimizeResult> Run(const OptimizeInput& in) { return Optimize(in, o, {&tm, &rr}); }
};

// ksoftmax_triton on the H100 (session 9): one num_warps=1 candidate ran 96 s and the run ended past the
// suite's limit. Each candidate now gets slow_factor x the original's measurement (2 s here: 10 s) and is
// pruned as too slow, not waited for; the run goes on and still finds the optimum.
TEST(Loop, SlowCandidateIsCutAtItsDeadline) {
  for (double factor : {5.0, 0.0}) {
    TimedFixture f;
    f.tm.slow = [](const Config& c) { return c.at("num_warps") == 1; };
    f.o.slow_factor = factor;
    f.o.strategy = "coordinate";
    f.o.tuned_seeds = false;
    f.o.patience = 100;
    const Config start{{"BLOCK_SIZE", 256}, {"num_warps", 2}, {"num_stages", 2}};  // num_warps 1 is a neighbour
    auto r = f.Run(Input(start));
    ASSERT_TRUE(r.ok()) << r.status().message();
    int cut = 0;
    double slowest = 0;
    for (const auto& c : r->candidates) {
      if (c.config.at("num_warps") == 1 && c.id > 0) {
        EXPECT_EQ(c.verdict, factor > 0 ? "pruned" : "ok") << c.message;
        cut += c.message.find("too slow") != std::string::npos;
      }
      if (c.id > 0 && !c.finalist) slowest = std::max(slowest, c.eval_s);
    }
    if (factor > 0) {
      EXPECT_GE(cut, 1);
      EXPECT_EQ(r->cut_slow, cut);
      EXPECT_LE(slowest, 10.0 + 1e-9);  // never waited past the deadline
      EXPECT_TRUE(r->improved);
      EXPECT_EQ(ConfigKey(r->best_config), ConfigKey(kBest));
      bool noted = false;
      for (const auto& n : r->notes) noted |= n.find("pruned as too slow") != std::string::npos;
      EXPECT_TRUE(noted);
    } else {
      EXPECT_GE(slowest, 96.0);  // without the deadline the slow candidate is waited for
    }
  }
}

// A compile that runs into the candidate's deadline is pruned as too slow, like a timing; its message names
// the limit it was sent with (the candidate's deadline, or the run's hard end when that cut it shorter).
TEST(Loop, SlowCompileIsCutAndNamesItsLimit) {
  // Without a hard end the deadline is 5 x the original's 2 s (10 s); with one at 60 s the search starts a
  // few seconds in and a compile's 80 s deadline (40 x 2 s) is cut to what is left (less the runner's grace).
  for (const auto& [hard_end, factor] : std::vector<std::pair<double, double>>{{0.0, 5.0}, {60.0, 40.0}}) {
    TimedFixture f;
    f.tm.slow_compile = [](const Config& c) { return c.at("num_warps") == 1; };
    f.o.compile_jobs = 2;
    f.o.slow_factor = factor;
    f.o.hard_end_s = hard_end;
    f.o.strategy = "coordinate";
    f.o.tuned_seeds = false;
    f.o.patience = 100;
    const Config start{{"BLOCK_SIZE", 256}, {"num_warps", 2}, {"num_stages", 2}};
    auto r = f.Run(Input(start));
    ASSERT_TRUE(r.ok()) << r.status().message();
    int cut = 0;
    for (const auto& c : r->candidates) {
      if (c.message.rfind("compile too slow", 0) != 0) continue;
      ++cut;
      EXPECT_EQ(c.verdict, "pruned");
      const double sent = f.tm.compile_timeout.at(ConfigKey(c.config));
      EXPECT_NE(c.message.find(fmt::format("no answer within {:.1f} s", sent)), std::string::npos) << c.message;
      const bool by_hard_end = sent < 2.0 * factor - 1e-9;
      EXPECT_EQ(c.message.find("the run's hard end") != std::string::npos, by_hard_end) << c.message;
      EXPECT_EQ(c.message.find("--slow-factor") != std::string::npos, !by_hard_end) << c.message;
      if (hard_end > 0) {
        EXPECT_TRUE(by_hard_end) << c.message;
      }
    }
    EXPECT_GE(cut, 1) << "hard end " << hard_end;
    EXPECT_EQ(r->cut_slow, cut);
  }
}

// attention_fwd_triton1 on the H100 (session 9): a measurement in flight outlasted the suite's limit. With a
// hard end every request's timeout is cut to what is left (less the runner's grace) and none starts after it:
// the run ends by the hard end, the original kept with the reason, exit 0 (a result, not an error).
TEST(Loop, HardEndCutsTheRunAndKeepsTheOriginal) {
  TimedFixture f;
  f.tm.slow = [](const Config& c) { return c.at("BLOCK_SIZE") != 64; };  // every candidate hangs
  f.o.slow_factor = 0;                                                     // (only the hard end cuts them)
  f.o.hard_end_s = 100;
  f.o.budget_seconds = 1000;
  f.o.strategy = "coordinate";
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->improved);
  EXPECT_LE(r->wall_s, 100.0 - f.o.runner_grace_s + 1e-9);
  for (const auto& [at, timeout] : f.tm.started_and_timeout)
    EXPECT_LE(at + timeout, 100.0 - f.o.runner_grace_s + 1e-9) << "a request could outlast the hard end";
  EXPECT_EQ(r->stop_reason, "hard end");
}

// The original's own timed run does not end before the hard end: kept (exit 0), said so, not a failure.
TEST(Loop, HardEndDuringTheBaselineKeepsTheOriginal) {
  TimedFixture f;
  f.tm.slow = [](const Config&) { return true; };
  f.o.hard_end_s = 40;
  auto r = f.Run(Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->improved);
  EXPECT_EQ(r->stop_reason, "hard end");
  EXPECT_NE(r->kept_reason.find("it was not checked on its own"), std::string::npos) << r->kept_reason;
  EXPECT_LE(r->wall_s, 40.0);
}

// chunk_gla_fwd (session 17): the original's three baseline tries left 1 s before the hard end and ncu was
// started with a 1 s limit (its timeout message then advised raising KILN_NCU_TIMEOUT_S). With less than a
// profile's least duration left, the original is not profiled and the note says why.
TEST(Loop, NoProfileStartsTooCloseToTheHardEnd) {
  for (double hard_end : {15.0, 100.0}) {
    Fixture f;
    FakeProfiler prof;
    f.o.hard_end_s = hard_end;  // the baseline takes 1 s of the fake clock, the runner's grace is 10 s
    auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (hard_end < 20) {
      EXPECT_EQ(prof.calls, 0);
      EXPECT_EQ(r->mode, "measure-only");
      EXPECT_EQ(r->mode_note.rfind("not profiled: 4 s are left before the hard end", 0), 0u) << r->mode_note;
    } else {
      EXPECT_GE(prof.calls, 1);
      EXPECT_EQ(r->mode, "profiled");
    }
  }
}

// On an H200 chunk_retention's profile ran 58 s into a 90 s hard end (ncu's limit was all the time left)
// and nothing was searched. Past 30 s a profile gets half of what is left; under 30 s it is not cut (nor
// past what is left).
TEST(Loop, ProfileGetsAShareOfTheTimeLeft) {
  for (double hard_end : {200.0, 60.0, 25.0}) {
    Fixture f;
    FakeProfiler prof;
    f.o.hard_end_s = hard_end;  // the baseline takes ~1 s of the fake clock, the runner's grace is 10 s
    auto r = Optimize(Input(), f.o, {&f.ev, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_FALSE(prof.limits.empty());
    // 200: (200 - ~1 - 10) / 2 = ~94.5 s; 60: half of ~49 s is ~24.5, raised to 30; 25: ~14 s, all that is left.
    const double want = hard_end == 200 ? 94.5 : hard_end == 60 ? 30.0 : 14.0;
    EXPECT_NEAR(prof.limits.front(), want, hard_end == 60 ? 1e-9 : 0.5) << hard_end;
  }
}

// Session 9 on the H100: the baseline and the ncu profile took 20-40 s of a 40 s budget and the search
// measured 1-6 configs. With --budget-scope search the budget is the search's: a 30 s profile leaves the
// search its whole 20 s, and the timings say where the time went.
TEST(Loop, BudgetScopeSearchCountsFixedCostsApart) {
  for (bool search_scope : {true, false}) {
    TimedFixture f;
    SlowProfiler prof;
    prof.clock = &f.clock;
    f.o.budget_seconds = 20;
    f.o.budget_is_search = search_scope;
    f.o.patience = 100;
    f.o.strategy = "coordinate";
    auto r = Optimize(Input(), f.o, {&f.tm, &f.rr, &prof});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const auto& t = r->timings;
    ASSERT_TRUE(t.contains("search")) << t.dump();
    EXPECT_NEAR(t["profile"].get<double>(), 15.0, 1e-9);
    EXPECT_NEAR(t["baseline"].get<double>(), 2.0, 1e-9);
    EXPECT_EQ(t["budget_scope"], search_scope ? "search" : "run");
    int measured = 0;
    for (const auto& c : r->candidates) measured += c.id > 0 && !c.finalist && c.verdict == "ok";
    if (search_scope) {
      EXPECT_GE(t["search"].get<double>(), 18.0);  // its 20 s, less the last measurement's 2 s
      for (const auto& c : r->candidates)  // none started after the budget's end (halving re-times follow)
        if (c.id > 0 && !c.finalist) {
          EXPECT_LE(c.at_s, t["before_search"].get<double>() + 20.0 + 1e-9);
        }
      EXPECT_GE(measured, 8);
      EXPECT_NEAR(r->reserve_s, 0.0, 1e-9);
    } else {
      EXPECT_LE(measured, 3);  // the old meaning: only the search's floor (15% of the budget) was left
    }
    EXPECT_NE(FormatReportText(*r).find("before the search (startup"), std::string::npos);
  }
}

// reversed_cumsum on the H100 (session 10): one candidate ran until its 5x deadline and the search took 47 s
// of a 20 s budget. With --budget-scope search a search measurement also ends by the budget's end (plus one
// typical measurement), and the message says which limit cut it.
TEST(Loop, SearchMeasurementEndsByTheBudgetsEnd) {
  TimedFixture f;
  f.tm.slow = [](const Config& c) { return c.at("num_warps") == 1; };
  f.o.slow_factor = 0;  // no deadline of its own: only the budget's end cuts it
  f.o.budget_is_search = true;
  f.o.budget_seconds = 20;
  f.o.strategy = "coordinate";
  f.o.tuned_seeds = false;
  f.o.patience = 100;
  const Config start{{"BLOCK_SIZE", 256}, {"num_warps", 2}, {"num_stages", 2}};
  auto r = f.Run(Input(start));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(r->timings["search"].get<double>(), 20.0 + 2.0 + 2.0 + 1e-9);  // + one measurement + halving's
  bool cut = false;
  for (const auto& c : r->candidates)
    cut |= c.verdict == "pruned" && c.message.find("the search budget's end") != std::string::npos;
  EXPECT_TRUE(cut);
}

}  // namespace
}  // namespace kiln::search
