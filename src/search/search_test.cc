// Unit tests of the search space, pruning, the GP / EI math, the strategies and successive halving.
#include <cmath>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "analysis/tunables.h"
#include "search/gp.h"
#include "search/halving.h"
#include "search/optimize_run.h"
#include "search/prune.h"
#include "search/space.h"
#include "search/strategy.h"

namespace kiln::search {
namespace {

Space Space1D() {
  return Space({{"BLOCK_SIZE", Role::kBlock, {16, 32, 64, 128, 256, 512, 1024}, false},
                {"num_warps", Role::kNumWarps, {1, 2, 4, 8, 16}, true},
                {"num_stages", Role::kNumStages, {1, 2, 3, 4}, true}});
}

Space SpaceGemm() {
  return Space({{"BLOCK_M", Role::kBlockM, {16, 32, 64, 128, 256}, false},
                {"BLOCK_N", Role::kBlockN, {16, 32, 64, 128, 256}, false},
                {"BLOCK_K", Role::kBlockK, {16, 32, 64, 128}, false},
                {"GROUP_M", Role::kGroupM, {1, 4, 8, 16}, false},
                {"num_warps", Role::kNumWarps, {2, 4, 8}, true},
                {"num_stages", Role::kNumStages, {2, 3, 4, 5, 6}, true}});
}

// Known optimum BLOCK_SIZE=128, num_warps=4, num_stages=3 (time 1.0 there).
double Bowl(const Config& c) {
  double b = std::log2(static_cast<double>(c.at("BLOCK_SIZE"))) - 7;
  double w = std::log2(static_cast<double>(c.at("num_warps"))) - 2;
  double s = static_cast<double>(c.at("num_stages")) - 3;
  return 1.0 + 0.3 * b * b + 0.2 * w * w + 0.1 * s * s;
}

// Drives a strategy to convergence (or max_evals); returns the best config and the count.
std::pair<Config, int> Drive(Strategy& s, const Config& start, const std::function<double(const Config&)>& f,
                             int max_evals = 1000) {
  Config best = start;
  double bs = f(start);
  s.Start(start, bs);
  int n = 0;
  while (n < max_evals) {
    auto props = s.Propose(8);
    if (props.empty()) break;
    for (auto& c : props) {
      double v = f(c);
      ++n;
      s.Observe(c, v);
      if (v < bs) {
        bs = v;
        best = c;
      }
    }
  }
  return {best, n};
}

TEST(Space, GuessRole) {
  EXPECT_EQ(GuessRole("BLOCK_SIZE_M"), Role::kBlockM);
  EXPECT_EQ(GuessRole("BLOCK_M"), Role::kBlockM);
  EXPECT_EQ(GuessRole("BLOCK_N"), Role::kBlockN);
  EXPECT_EQ(GuessRole("BLOCK_SIZE_K"), Role::kBlockK);
  EXPECT_EQ(GuessRole("BLOCK_SIZE"), Role::kBlock);
  EXPECT_EQ(GuessRole("XBLOCK"), Role::kBlock);
  EXPECT_EQ(GuessRole("GROUP_SIZE_M"), Role::kGroupM);
  EXPECT_EQ(GuessRole("num_warps"), Role::kNumWarps);
  EXPECT_EQ(GuessRole("num_stages"), Role::kNumStages);
  EXPECT_EQ(GuessRole("BLOCK_DMODEL"), Role::kOther);
  EXPECT_EQ(GuessRole("HEAD_DIM"), Role::kOther);
  EXPECT_EQ(GuessRole("eps"), Role::kOther);
}

TEST(Space, NeighborsDoubleHalveAndStep) {
  Space s = Space1D();
  auto n = s.Neighbors({{"BLOCK_SIZE", 128}, {"num_warps", 4}, {"num_stages", 1}});
  // BLOCK 64/256, warps 2/8, stages 2 (no stage 0).
  ASSERT_EQ(n.size(), 5u);
  std::set<std::string> keys;
  for (auto& c : n) keys.insert(ConfigKey(c));
  EXPECT_TRUE(keys.count("BLOCK_SIZE=64 num_stages=1 num_warps=4"));
  EXPECT_TRUE(keys.count("BLOCK_SIZE=256 num_stages=1 num_warps=4"));
  EXPECT_TRUE(keys.count("BLOCK_SIZE=128 num_stages=1 num_warps=8"));
  EXPECT_TRUE(keys.count("BLOCK_SIZE=128 num_stages=2 num_warps=4"));
  EXPECT_EQ(s.Size(), 7 * 5 * 4);
  EXPECT_EQ(s.Enumerate(1000).size(), 140u);
  EXPECT_TRUE(s.Enumerate(100).empty());
}

Space MatmulSpace() {
  return Space({{"BLOCK_M", Role::kBlockM, {32, 64, 128, 256}, false},
                {"BLOCK_N", Role::kBlockN, {32, 64, 128, 256}, false},
                {"BLOCK_K", Role::kBlockK, {32, 64}, false},
                {"num_warps", Role::kNumWarps, {4, 8}, true},
                {"num_stages", Role::kNumStages, {3, 4}, true}});
}

TEST(Space, CoupledNeighborsPairTilesWithWarpsAndBlockKWithStages) {
  Space s = MatmulSpace();
  auto n =
      s.CoupledNeighbors({{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"num_warps", 4}, {"num_stages", 3}});
  std::set<std::string> keys;
  for (auto& c : n) keys.insert(ConfigKey(c));
  EXPECT_EQ(keys, (std::set<std::string>{
                      "BLOCK_K=64 BLOCK_M=256 BLOCK_N=128 num_stages=3 num_warps=8",  // taller tile, more warps
                      "BLOCK_K=64 BLOCK_M=128 BLOCK_N=256 num_stages=3 num_warps=8",  // wider tile, more warps
                      "BLOCK_K=32 BLOCK_M=128 BLOCK_N=128 num_stages=4 num_warps=4",  // shorter K, more stages
                      "BLOCK_K=64 BLOCK_M=256 BLOCK_N=64 num_stages=3 num_warps=4",   // same area, other shape
                      "BLOCK_K=64 BLOCK_M=64 BLOCK_N=256 num_stages=3 num_warps=4"}));
  EXPECT_EQ(n.size(), keys.size());
  // A space without the roles has none.
  EXPECT_TRUE(Space({{"X", Role::kOther, {1, 2, 3}, false}}).CoupledNeighbors({{"X", 2}}).empty());
}

TEST(Space, CandidateValuesIncludeCurrentAndClip) {
  SpaceOptions o;
  auto v = CandidateValues(Role::kBlock, 1024, {}, 1, 0, o);
  EXPECT_EQ(v.front(), 128);
  EXPECT_EQ(v.back(), 8192);
  auto w = CandidateValues(Role::kBlockM, 100, {}, 1, 0, o);  // not a power of two: kept
  EXPECT_NE(std::find(w.begin(), w.end(), 100), w.end());
  EXPECT_LE(w.back(), 256 * 8);
  auto k = CandidateValues(Role::kBlockK, 32, {}, 1, 64, o);
  EXPECT_EQ(k.back(), 64);
}

TEST(Space, CandidateValuesReachTheCanonicalRangeFromAnUntunedValue) {
  // TritonBench's add_example launches BLOCK_SIZE=4: 8x around it (16..32) would never reach the
  // block sizes an elementwise kernel needs; the canonical 1-D range is always in.
  SpaceOptions o;
  auto v = CandidateValues(Role::kBlock, 4, {}, 1, 0, o);
  EXPECT_EQ(v.front(), 4);
  EXPECT_NE(std::find(v.begin(), v.end(), 1024), v.end());
  EXPECT_EQ(v.back(), 4096);
  auto m = CandidateValues(Role::kBlockM, 16, {}, 1, 0, o);  // 2-D: up to 128 at least
  EXPECT_EQ(m.back(), 128);
  auto big = CandidateValues(Role::kBlock, 16384, {}, 1, 0, o);  // large current: down to the canonical floor
  EXPECT_EQ(big.front(), 256);
}

TEST(Prune, SharedMemoryAgainstOptInLimit) {
  Space s = SpaceGemm();
  PruneContext p;  // 232448 B, 2-byte operands
  Config ok{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"GROUP_M", 8}, {"num_warps", 8}, {"num_stages", 4}};
  EXPECT_EQ(GemmSharedBytes(s, ok, 2), 2 * (128 * 64 + 64 * 128) * 4);  // 131072
  EXPECT_FALSE(PruneBeforeCompile(s, ok, p).has_value());
  Config big = ok;
  big["BLOCK_N"] = 256;
  big["BLOCK_M"] = 256;
  big["num_stages"] = 4;  // 2*(256*64+64*256)*4 = 262144 > 232448
  auto why = PruneBeforeCompile(s, big, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("shared memory"), std::string::npos);
  big["num_stages"] = 3;  // 196608: fits; accumulator 256*256/(32*8) = 256: fits
  EXPECT_FALSE(PruneBeforeCompile(s, big, p).has_value());
  p.dtype_bytes = 4;  // fp32 operands: 393216 > limit
  EXPECT_TRUE(PruneBeforeCompile(s, big, p).has_value());
}

TEST(Prune, AccumulatorRegisters) {
  Space s = SpaceGemm();
  PruneContext p;
  Config c{{"BLOCK_M", 256}, {"BLOCK_N", 256}, {"BLOCK_K", 16}, {"GROUP_M", 8}, {"num_warps", 4}, {"num_stages", 2}};
  EXPECT_EQ(AccumulatorRegs(s, c), 512);
  auto why = PruneBeforeCompile(s, c, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("registers"), std::string::npos);
  c["num_warps"] = 8;
  EXPECT_EQ(AccumulatorRegs(s, c), 256);
  EXPECT_FALSE(PruneBeforeCompile(s, c, p).has_value());
}

// Two 1-D blocks that are the sides of one tile (index_select_bwd's [BLOCK_SIZE_INDEX, BLOCK_SIZE_COL], searched at
// 2048 x 1024 on an H200: a compile error) hold their product: past 16384 elements the config is pruned, unless the
// original's own tile is as large; a side outside the config comes from the values the original ran with.
TEST(Prune, TilesOfOneDimensionalBlocks) {
  Param bi{"BLOCK_I", Role::kBlock, {1, 16, 64, 512, 2048}, false, {{"BLOCK_I", "BLOCK_C"}}};
  Param bc{"BLOCK_C", Role::kBlock, {256, 512, 1024, 4096}, false, {{"BLOCK_I", "BLOCK_C"}}};
  Param bv{"BV", Role::kBlock, {32, 512, 1024}, false, {{"BV", "BK"}, {"BV", "2"}}};
  Space s({bi, bc, bv, {"num_warps", Role::kNumWarps, {1, 4, 8}, true}});
  PruneContext p;
  p.ran_with = {{"BK", 32}, {"BLOCK_I", 1}, {"BLOCK_C", 512}, {"BV", 32}};
  Config c{{"BLOCK_I", 16}, {"BLOCK_C", 1024}, {"BV", 32}, {"num_warps", 4}};
  EXPECT_FALSE(PruneBeforeCompile(s, c, p).has_value());  // 16384 elements
  c["BLOCK_I"] = 2048;
  auto why = PruneBeforeCompile(s, c, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "BLOCK_I=2048 makes a tile of 2097152 elements (> 16384): BLOCK_I x BLOCK_C");
  c["BLOCK_I"] = 1;
  c["BV"] = 1024;  // [BV, BK] = 32768 elements
  why = PruneBeforeCompile(s, c, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "BV=1024 makes a tile of 32768 elements (> 16384): BV x BK");
  c["BV"] = 512;
  EXPECT_FALSE(PruneBeforeCompile(s, c, p).has_value());
  p.ran_with["BV"] = 1024;  // the original's own tile is that large: not pruned below it
  c["BV"] = 1024;
  EXPECT_FALSE(PruneBeforeCompile(s, c, p).has_value());
}

TEST(Prune, AfterCompileSpills) {
  PruneContext p;
  exec::KernelFacts k;
  k.name = "matmul_kernel";
  k.n_spills = 3;
  EXPECT_FALSE(PruneAfterCompile({k}, p).has_value());
  k.n_spills = 40;
  EXPECT_TRUE(PruneAfterCompile({k}, p).has_value());
  p.baseline_spills = 64;  // the original already spilled more: not a reason to drop
  EXPECT_FALSE(PruneAfterCompile({k}, p).has_value());
}

TEST(Prune, InferDtypeBytes) {
  Space s = SpaceGemm();
  Config c{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"num_stages", 3}};
  exec::KernelFacts k;
  k.shared_bytes = 4 * (64 * 32 + 32 * 64) * 3;
  EXPECT_EQ(InferDtypeBytes(s, c, {k}), 4);
  k.shared_bytes = 2 * (64 * 32 + 32 * 64) * 3 + 512;  // plus epilogue scratch: still 2
  EXPECT_EQ(InferDtypeBytes(s, c, {k}), 2);
  // An autotuned original ran another config than `c`: its recorded constexprs and stages count (fp16
  // at 128x128x32, 4 stages; read against `c` it would look like 4-byte elements).
  k.shared_bytes = 2 * (128 * 32 + 32 * 128) * 4;
  k.constexprs = {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32}};
  k.num_stages = 4;
  EXPECT_EQ(InferDtypeBytes(s, c, {k}), 2);
}

// A block size and warps known only at run time (a wrapper's, issue 21): the original's recorded values
// join the space and become the baseline; a name without a recorded value keeps its placeholder.
// Learned pruning (issue 21): a config that ran out of resources excludes the configs that need at least as
// much (larger or equal tiles and stages, same warps), not its neighbours with smaller tiles or other warps.
TEST(Prune, LearnsFromOutOfResources) {
  Space s = SpaceGemm();
  PruneContext p;
  p.dtype_bytes = 1;  // the static shared-memory bound does not fire for these tiles
  Config failed{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"num_warps", 4}, {"num_stages", 4}};
  Config bigger = failed;
  bigger["BLOCK_N"] = 256;
  bigger["num_stages"] = 5;
  Config smaller = failed;
  smaller["BLOCK_K"] = 32;
  Config other_warps = bigger;
  other_warps["num_warps"] = 8;
  EXPECT_FALSE(PruneBeforeCompile(s, bigger, p).has_value());
  p.out_of_resources.push_back(failed);
  auto why = PruneBeforeCompile(s, bigger, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("ran out of them"), std::string::npos) << *why;
  EXPECT_TRUE(PruneBeforeCompile(s, failed, p).has_value());
  EXPECT_FALSE(PruneBeforeCompile(s, smaller, p).has_value());
  EXPECT_FALSE(PruneBeforeCompile(s, other_warps, p).has_value());
  EXPECT_TRUE(IsResourceFailure("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144"));
  EXPECT_FALSE(IsResourceFailure("CompilationError: at 12:4: unsupported"));
}

TEST(Prune, AdoptRecordedValues) {
  analysis::Tunables t;
  analysis::Tunable b;
  b.name = "BLOCK";
  b.role = analysis::TunableRole::kBlock;
  b.power_of_two = true;
  b.editable = true;
  b.site = analysis::TunableSite::kParamRebind;
  analysis::Tunable w;
  w.name = "num_warps";
  w.launch_option = true;
  w.editable = true;
  w.site = analysis::TunableSite::kLaunchOverride;
  analysis::Tunable st = w;
  st.name = "num_stages";
  t.items = {b, w, st};
  SpaceBuild sb = SpaceFromTunables(t, SpaceOptions{});
  ASSERT_EQ(sb.runtime_valued, (std::vector<std::string>{"BLOCK", "num_warps", "num_stages"}));
  exec::KernelFacts k;
  k.name = "scale_kernel";
  k.constexprs = {{"BLOCK", 96}};  // not a power of two in the space: added
  k.num_warps = 8;
  Config base = sb.baseline;
  auto notes = AdoptRecordedValues(sb.runtime_valued, "scale_kernel", {k}, &sb.space, &base);
  EXPECT_EQ(base["BLOCK"], 96);
  EXPECT_EQ(base["num_warps"], 8);
  const Param* pb = sb.space.Find("BLOCK");
  ASSERT_NE(pb, nullptr);
  EXPECT_NE(std::find(pb->values.begin(), pb->values.end(), 96), pb->values.end());
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_NE(notes[2].find("not recorded"), std::string::npos) << notes[2];
  // A recorded power of two below the placeholder's range: its neighbourhood joins (16..64 for 32,
  // the space's floor 16), not only the value.
  SpaceBuild sb2 = SpaceFromTunables(t, SpaceOptions{});
  Config base3 = sb2.baseline;
  k.constexprs = {{"BLOCK", 32}};
  AdoptRecordedValues(sb2.runtime_valued, "scale_kernel", {k}, &sb2.space, &base3);
  const auto& vs = sb2.space.Find("BLOCK")->values;
  EXPECT_EQ(base3["BLOCK"], 32);
  for (int64_t v : {16, 32, 64, 128}) EXPECT_NE(std::find(vs.begin(), vs.end(), v), vs.end()) << v;
  EXPECT_EQ(vs.front(), 16);
  EXPECT_LE(vs.back(), sb.space.Find("BLOCK")->values.back());
  // Another kernel's facts say nothing about this one.
  Config base2 = sb.baseline;
  AdoptRecordedValues(sb.runtime_valued, "other_kernel", {k}, &sb.space, &base2);
  EXPECT_EQ(base2["num_warps"], sb.baseline["num_warps"]);
}

TEST(Gp, Matern52Values) {
  EXPECT_DOUBLE_EQ(Matern52(0, 1, 1), 1.0);
  EXPECT_NEAR(Matern52(1.0, 1.0, 1.0), 0.5239941088318203, 1e-12);
  EXPECT_NEAR(Matern52(0.5, 1.0, 1.0), 0.8286491424181255, 1e-12);
  EXPECT_NEAR(Matern52(1.0, 2.0, 3.0), 3.0 * 0.8286491424181255, 1e-12);
}

TEST(Gp, PosteriorMatchesHandComputation) {
  // Two points x=0 (y=1), x=1 (y=-1); l=1, s2=1, no noise. Values computed by hand (2x2 inverse).
  Eigen::MatrixXd X(2, 1);
  X << 0, 1;
  Eigen::VectorXd y(2);
  y << 1, -1;
  GaussianProcess gp;
  ASSERT_TRUE(gp.Fit(X, y, {1.0, 1.0, 0.0}));
  Eigen::VectorXd q(1);
  q << 0.5;
  auto p = gp.Predict(q);
  EXPECT_NEAR(p.mean, 0.0, 1e-9);
  EXPECT_NEAR(p.var, 0.09886869345362947, 1e-7);
  q << 0.25;
  p = gp.Predict(q);
  EXPECT_NEAR(p.mean, 0.5783796519499413, 1e-7);
  EXPECT_NEAR(p.var, 0.0523172768781045, 1e-7);
  q << 0.75;
  p = gp.Predict(q);
  EXPECT_NEAR(p.mean, -0.5783796519499413, 1e-7);
  // At a training point: the observation, no variance.
  q << 0.0;
  p = gp.Predict(q);
  EXPECT_NEAR(p.mean, 1.0, 1e-6);
  EXPECT_NEAR(p.var, 0.0, 1e-6);
}

TEST(Gp, ExpectedImprovementHandValues) {
  EXPECT_NEAR(ExpectedImprovement(0, 1, 0), 1.0 / std::sqrt(2 * M_PI), 1e-12);  // phi(0)
  EXPECT_NEAR(ExpectedImprovement(0, 1, 0.5), 0.6977965574013061, 1e-12);
  EXPECT_NEAR(ExpectedImprovement(-0.5783796519499413, 0.0523172768781045, -1), 0.0029257967975299132, 1e-12);
  EXPECT_DOUBLE_EQ(ExpectedImprovement(1, 0, 2), 1.0);  // certain improvement of 1
  EXPECT_DOUBLE_EQ(ExpectedImprovement(3, 0, 2), 0.0);
  // EI grows with uncertainty at equal mean.
  EXPECT_GT(ExpectedImprovement(1, 4, 1), ExpectedImprovement(1, 1, 1));
}

TEST(Gp, FitBestPrefersLikelihood) {
  Eigen::MatrixXd X(5, 1);
  X << 0, 0.25, 0.5, 0.75, 1.0;
  Eigen::VectorXd y(5);
  y << 0, 0.1, 0.2, 0.3, 0.4;  // smooth: long length scales explain it best
  GaussianProcess gp;
  ASSERT_TRUE(gp.FitBest(X, y));
  EXPECT_GE(gp.hyper().length_scale, 0.6);
}

TEST(Strategy, CoordinateDescentFindsKnownOptimum) {
  auto s = MakeStrategy("coordinate", {Space1D()});
  ASSERT_TRUE(s.ok());
  auto [best, n] = Drive(**s, {{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 1}}, Bowl);
  EXPECT_EQ(ConfigKey(best), "BLOCK_SIZE=128 num_stages=3 num_warps=4");
  EXPECT_LT(n, 140);  // fewer than exhaustive
}

TEST(Strategy, CoordinateDescentUnderNoise) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.003);
  auto f = [&](const Config& c) { return Bowl(c) * (1 + noise(rng)); };
  auto s = MakeStrategy("coordinate", {Space1D()});
  auto [best, n] = Drive(**s, {{"BLOCK_SIZE", 1024}, {"num_warps", 16}, {"num_stages", 1}}, f);
  EXPECT_EQ(ConfigKey(best), "BLOCK_SIZE=128 num_stages=3 num_warps=4");
}

TEST(Strategy, CoordinateRespectsFeasibility) {
  StrategyContext ctx{Space1D()};
  ctx.feasible = [](const Config& c) { return c.at("BLOCK_SIZE") <= 64; };
  auto s = MakeStrategy("coordinate", ctx);
  int infeasible = 0;
  (*s)->Start({{"BLOCK_SIZE", 16}, {"num_warps", 4}, {"num_stages", 3}},
              Bowl({{"BLOCK_SIZE", 16}, {"num_warps", 4}, {"num_stages", 3}}));
  while (true) {
    auto p = (*s)->Propose(8);
    if (p.empty()) break;
    for (auto& c : p) {
      if (c.at("BLOCK_SIZE") > 64) ++infeasible;
      (*s)->Observe(c, Bowl(c));
    }
  }
  EXPECT_EQ(infeasible, 0);
}

TEST(Strategy, CoordinateStopsWhenGainBelowThreshold) {
  // Neighbours gain only 0.05% (< 0.1%): converge at once.
  auto flat = [](const Config& c) { return c.at("BLOCK_SIZE") == 64 ? 0.9995 : 1.0; };
  auto s = MakeStrategy("coordinate", {Space1D()});
  auto [best, n] = Drive(**s, {{"BLOCK_SIZE", 128}, {"num_warps", 4}, {"num_stages", 3}}, flat);
  EXPECT_EQ(best.at("BLOCK_SIZE"), 64);  // seen, but the strategy does not move there
  EXPECT_EQ(n, 8);                       // one round of neighbours and one of the 2 coupled steps
}

TEST(Strategy, CoordinateTakesCoupledStepsWhereSingleStepsAreWorse) {
  // A bigger tile is slower at 4 warps and fast at 8; 8 warps alone are slower: every single step from
  // 128x128 at 4 warps loses (as matmul_triton2's did on an H100), the coupled step wins; then BLOCK_K 32.
  auto f = [](const Config& c) {
    double t = 1.0;
    if (c.at("BLOCK_M") == 256)
      t *= c.at("num_warps") == 8 ? 0.8 : 3.0;
    else if (c.at("num_warps") == 8)
      t *= 1.1;
    if (c.at("BLOCK_N") != 128) t *= 1.5;
    if (c.at("BLOCK_M") < 128) t *= 1.5;
    if (c.at("BLOCK_K") == 32) t *= c.at("BLOCK_M") == 256 ? 0.9 : 1.2;
    if (c.at("num_stages") == 3) t *= 1.05;
    return t;
  };
  auto s = MakeStrategy("coordinate", {MatmulSpace()});
  auto [best, n] =
      Drive(**s, {{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 64}, {"num_warps", 4}, {"num_stages", 4}}, f);
  EXPECT_EQ(ConfigKey(best), "BLOCK_K=32 BLOCK_M=256 BLOCK_N=128 num_stages=4 num_warps=8");
  EXPECT_LE(n, 25);  // within 25% of the 128-config grid
}

TEST(Strategy, RulesFollowMovesThenPolish) {
  StrategyContext ctx{Space1D()};
  ctx.moves = {"bigger_tiles", "more_warps"};
  auto s = MakeStrategy("rules", ctx);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->name(), "rules");
  auto [best, n] = Drive(**s, {{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 3}}, Bowl);
  EXPECT_EQ(ConfigKey(best), "BLOCK_SIZE=128 num_stages=3 num_warps=4");
}

TEST(Strategy, RulesRoundTriesOneAndTwoSteps) {
  StrategyContext ctx{Space1D()};
  ctx.moves = {"bigger_tiles", "more_warps"};
  auto s = MakeStrategy("rules", ctx);
  ASSERT_TRUE(s.ok());
  (*s)->Start({{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 3}}, 1.0);
  auto first = (*s)->Propose(8);
  std::vector<std::string> keys;
  for (const auto& c : first) keys.push_back(ConfigKey(c));
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "BLOCK_SIZE=32 num_stages=3 num_warps=1", "BLOCK_SIZE=16 num_stages=3 num_warps=2",
                      "BLOCK_SIZE=64 num_stages=3 num_warps=1", "BLOCK_SIZE=16 num_stages=3 num_warps=4"}));
  // With room for only two, the single steps come first.
  auto s2 = MakeStrategy("rules", ctx);
  (*s2)->Start({{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 3}}, 1.0);
  EXPECT_EQ((*s2)->Propose(2).size(), 2u);
}

TEST(Space, TunedSeedsAreTheTilesTunedKernelsUse) {
  // GEMM: Hopper tiles first, GROUP_M 8, values snapped to the space (BLOCK_K at most 64 here).
  Space g({{"BLOCK_M", Role::kBlockM, {32, 64, 128, 256}, false},
           {"BLOCK_N", Role::kBlockN, {32, 64, 128, 256}, false},
           {"BLOCK_K", Role::kBlockK, {16, 32}, false},
           {"GROUP_M", Role::kGroupM, {1, 4, 8, 16}, false},
           {"num_warps", Role::kNumWarps, {2, 4, 8}, true},
           {"num_stages", Role::kNumStages, {2, 3, 4, 5, 6}, true}});
  const Config base{{"BLOCK_M", 32}, {"BLOCK_N", 32}, {"BLOCK_K", 32}, {"GROUP_M", 1}, {"num_warps", 4},
                    {"num_stages", 2}, {"OTHER", 7}};
  auto seeds = TunedSeeds(g, base);
  ASSERT_EQ(seeds.size(), 6u);
  EXPECT_EQ(ConfigKey(seeds[0]), "BLOCK_K=32 BLOCK_M=128 BLOCK_N=128 GROUP_M=8 OTHER=7 num_stages=3 num_warps=8");
  EXPECT_EQ(ConfigKey(seeds[1]), "BLOCK_K=32 BLOCK_M=128 BLOCK_N=256 GROUP_M=8 OTHER=7 num_stages=3 num_warps=8");
  EXPECT_EQ(ConfigKey(seeds[2]), "BLOCK_K=32 BLOCK_M=64 BLOCK_N=256 GROUP_M=8 OTHER=7 num_stages=4 num_warps=4");
  // The diagnosis asks for smaller tiles (an original at 128x128 spilling): smaller areas first, the largest of them
  // first, of equal areas those keeping BLOCK_N >= BLOCK_M first (64x128, then 128x64), then 128x128's area,
  // then larger.
  const Config big{{"BLOCK_M", 128}, {"BLOCK_N", 128}, {"BLOCK_K", 32},
                   {"GROUP_M", 1},   {"num_warps", 4}, {"num_stages", 2}};
  auto plain = TunedSeeds(g, big);
  auto small = TunedSeeds(g, big, true);
  ASSERT_EQ(small.size(), plain.size());
  EXPECT_EQ(ConfigKey(plain[1]), "BLOCK_K=32 BLOCK_M=128 BLOCK_N=256 GROUP_M=8 num_stages=3 num_warps=8");
  EXPECT_EQ(ConfigKey(small[0]), "BLOCK_K=32 BLOCK_M=64 BLOCK_N=128 GROUP_M=8 num_stages=4 num_warps=4");
  EXPECT_EQ(ConfigKey(small[1]), "BLOCK_K=32 BLOCK_M=128 BLOCK_N=64 GROUP_M=8 num_stages=4 num_warps=4");
  // An original with BLOCK_N < BLOCK_M keeps that side first.
  const Config tall{{"BLOCK_M", 256}, {"BLOCK_N", 64},  {"BLOCK_K", 32},
                    {"GROUP_M", 1},   {"num_warps", 4}, {"num_stages", 2}};
  auto wide_seeds = TunedSeeds(g, tall, true);
  ASSERT_FALSE(wide_seeds.empty());
  EXPECT_EQ(ConfigKey(wide_seeds[0]), "BLOCK_K=32 BLOCK_M=128 BLOCK_N=64 GROUP_M=8 num_stages=4 num_warps=4");
  EXPECT_EQ(ConfigKey(small.back()), "BLOCK_K=32 BLOCK_M=128 BLOCK_N=256 GROUP_M=8 num_stages=3 num_warps=8");
  for (size_t i = 2; i + 1 < small.size(); ++i) EXPECT_EQ(small[i].at("BLOCK_M") * small[i].at("BLOCK_N"), 128 * 128);
  // 1-D memory-bound: blocks and warps by bytes in flight; the baseline itself is not a seed.
  auto one = TunedSeeds(Space1D(), {{"BLOCK_SIZE", 1024}, {"num_warps", 4}, {"num_stages", 3}});
  ASSERT_EQ(one.size(), 2u);  // 2048 and 4096 are outside Space1D (up to 1024): snapped to 1024/8 and 1024/16
  EXPECT_EQ(ConfigKey(one[0]), "BLOCK_SIZE=1024 num_stages=3 num_warps=8");
  EXPECT_EQ(ConfigKey(one[1]), "BLOCK_SIZE=1024 num_stages=3 num_warps=16");
  Space wide({{"BLOCK", Role::kBlock, {256, 512, 1024, 2048, 4096}, false},
              {"num_warps", Role::kNumWarps, {1, 2, 4, 8, 16}, true}});
  auto w = TunedSeeds(wide, {{"BLOCK", 256}, {"num_warps", 4}});
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(ConfigKey(w[0]), "BLOCK=1024 num_warps=4");
  EXPECT_EQ(ConfigKey(w[3]), "BLOCK=4096 num_warps=16");
  // Neither shape (two 1-D blocks, or only launch options): no seeds.
  Space two({{"XBLOCK", Role::kBlock, {64, 128}, false}, {"RBLOCK", Role::kBlock, {64, 128}, false}});
  EXPECT_TRUE(TunedSeeds(two, {{"XBLOCK", 64}, {"RBLOCK", 64}}).empty());
}

TEST(Strategy, SeedsAreMeasuredFirstAndTheSearchStartsFromTheBest) {
  // Bowl's optimum is BLOCK_SIZE=128/4 warps/3 stages; the seed 128/8/3 is one step from it, while the
  // start 16/1/1 is far: the seeds come first, then coordinate descent steps from the best seed.
  StrategyContext ctx{Space1D()};
  ctx.seeds = {{{"BLOCK_SIZE", 128}, {"num_warps", 8}, {"num_stages", 3}},
               {{"BLOCK_SIZE", 1024}, {"num_warps", 16}, {"num_stages", 1}}};
  auto s = MakeStrategy("coordinate", ctx);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->name(), "coordinate");
  const Config start{{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 1}};
  (*s)->Start(start, Bowl(start));
  auto first = (*s)->Propose(8);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(ConfigKey(first[0]), "BLOCK_SIZE=128 num_stages=3 num_warps=8");
  for (auto& c : first) (*s)->Observe(c, Bowl(c));
  auto next = (*s)->Propose(16);  // neighbours of the best seed, not of the start
  bool has_opt = false;
  for (auto& c : next) {
    EXPECT_NE(ConfigKey(c), "BLOCK_SIZE=32 num_stages=1 num_warps=1");
    has_opt |= ConfigKey(c) == "BLOCK_SIZE=128 num_stages=3 num_warps=4";
  }
  EXPECT_TRUE(has_opt);
  auto [best, n] = Drive(**MakeStrategy("coordinate", ctx), start, Bowl);
  EXPECT_EQ(ConfigKey(best), "BLOCK_SIZE=128 num_stages=3 num_warps=4");
  auto plain = Drive(**MakeStrategy("coordinate", {Space1D()}), start, Bowl);
  EXPECT_LT(n, plain.second);  // the seeds saved the walk from 16/1/1
}

TEST(Notes, EventTimingSaysWhichCasesNoGraphCouldReplay) {
  exec::EvalResult r;
  exec::CaseResult a, b, c;
  a.name = "perf_1", a.timing_method = "cuda_graph";
  b.name = "perf_2", b.timing_method = "events_cold_l2_rng";
  c.name = "perf_3", c.timing_method = "events_cold_l2_nocapture";
  r.cases = {a};
  EXPECT_EQ(internal::EventTimingNote(r), "");
  r.cases = {a, b, c};
  EXPECT_EQ(internal::EventTimingNote(r),
            "the original draws random numbers in perf_2: timed with CUDA events, not a CUDA graph; a CUDA graph "
            "could not be captured in perf_3: timed with CUDA events instead");
}

TEST(Notes, SkippedCasesNamesTheSizesThatDoNotFit) {
  exec::EvalResult r;
  r.raw = nlohmann::json::object();
  EXPECT_EQ(internal::SkippedCasesNote(r), "");
  r.raw["skipped_cases"] = {"perf_9: its inputs take 30 bytes; 4x that does not fit the GPU's 80 bytes"};
  EXPECT_EQ(internal::SkippedCasesNote(r),
            "sizes left out because they do not fit this GPU's memory (the next largest are timed): perf_9: its "
            "inputs take 30 bytes; 4x that does not fit the GPU's 80 bytes");
}

TEST(Space, RestrictToGrid) {
  Space s = SpaceGemm();
  Config base{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 1}, {"num_warps", 4}, {"num_stages", 3}};
  auto grid = nlohmann::json::parse(R"({"BLOCK_M": [128, 64], "BLOCK_N": [128], "num_warps": [4, 8]})");
  ASSERT_TRUE(Space::RestrictToGrid(grid, base, &s).ok());
  EXPECT_EQ(s.Find("BLOCK_M")->values, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(s.Find("BLOCK_N")->values, (std::vector<int64_t>{64, 128}));  // the original's 64 kept
  EXPECT_EQ(s.Find("BLOCK_K")->values, (std::vector<int64_t>{32}));       // unlisted: fixed
  EXPECT_EQ(s.Find("num_stages")->values, (std::vector<int64_t>{3}));
  EXPECT_DOUBLE_EQ(s.Size(), 2 * 2 * 2);
  Space t = SpaceGemm();
  const Status bad = Space::RestrictToGrid(nlohmann::json::parse(R"({"BLOCK_Q": [1]})"), base, &t);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("'BLOCK_Q' is not a tunable"), std::string::npos) << bad.message();
  EXPECT_FALSE(Space::RestrictToGrid(nlohmann::json::parse(R"({"BLOCK_M": [1.5]})"), base, &t).ok());
  EXPECT_FALSE(Space::RestrictToGrid(nlohmann::json::parse(R"({"BLOCK_M": []})"), base, &t).ok());
  EXPECT_FALSE(Space::RestrictToGrid(nlohmann::json::parse(R"([1])"), base, &t).ok());
  EXPECT_DOUBLE_EQ(t.Size(), SpaceGemm().Size());  // unchanged by the errors
}

// A candidate's compile facts are written by exec::ToJson, the one writer of kernel facts.
TEST(ResultJson, CandidateKernelsUseTheKernelFactsWriter) {
  CandidateRecord c;
  exec::KernelFacts k;
  k.name = "mm_kernel";
  k.launches = 2;
  k.n_regs = 96;
  k.num_warps = 4;
  k.has_dot = true;
  c.kernels.push_back(k);
  const nlohmann::json j = internal::CandJson(c);
  ASSERT_EQ(j["kernels"].size(), 1u);
  EXPECT_EQ(j["kernels"][0], exec::ToJson(k));
  EXPECT_EQ(j["kernels"][0]["n_regs"], 96);
  EXPECT_EQ(j["kernels"][0]["launches"], 2);
  EXPECT_EQ(j["kernels"][0]["has_dot"], true);
  EXPECT_FALSE(j["kernels"][0].contains("n_spills"));  // not reported: not written
}

TEST(Strategy, ApplyMove) {
  Space g = SpaceGemm();
  Config c{{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}, {"GROUP_M", 1}, {"num_warps", 4}, {"num_stages", 3}};
  auto b = ApplyMove(g, c, "bigger_tiles");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->at("BLOCK_M"), 128);
  EXPECT_EQ(b->at("BLOCK_N"), 128);
  EXPECT_EQ(b->at("BLOCK_K"), 32);
  EXPECT_EQ(ApplyMove(g, c, "group_m")->at("GROUP_M"), 8);
  EXPECT_EQ(ApplyMove(g, c, "more_stages")->at("num_stages"), 4);
  EXPECT_FALSE(ApplyMove(g, c, "split_k"));
  EXPECT_FALSE(ApplyMove(g, c, "eviction_hints"));  // no streaming-load knob in this space
  Space e({{"BLOCK", Role::kBlock, {512, 1024}, false}, {kEvictFirstParam, Role::kOther, {0, 1}, false}});
  auto h = ApplyMove(e, {{"BLOCK", 1024}, {kEvictFirstParam, 0}}, "eviction_hints");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->at(kEvictFirstParam), 1);
  EXPECT_EQ(h->at("BLOCK"), 1024);
  EXPECT_FALSE(ApplyMove(e, *h, "eviction_hints"));  // already on
  c["num_warps"] = 8;
  EXPECT_FALSE(ApplyMove(g, c, "more_warps"));  // already at the top
}

TEST(Strategy, BayesFindsOptimumWithFewEvaluations) {
  StrategyContext ctx{Space1D()};
  ctx.seed = 3;
  auto s = MakeStrategy("bayes", ctx);
  ASSERT_TRUE(s.ok());
  auto [best, n] = Drive(**s, {{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 1}}, Bowl, 40);
  EXPECT_LE(Bowl(best), 1.1) << ConfigKey(best);
  EXPECT_LE(n, 40);
}

TEST(Strategy, ExhaustiveVisitsEveryFeasibleConfigOnce) {
  StrategyContext ctx{Space1D()};
  ctx.feasible = [](const Config& c) { return c.at("num_warps") != 16; };
  auto s = MakeStrategy("exhaustive", ctx);
  auto [best, n] = Drive(**s, {{"BLOCK_SIZE", 16}, {"num_warps", 1}, {"num_stages", 1}}, Bowl);
  EXPECT_EQ(n, 7 * 4 * 4 - 1);  // minus the start
  EXPECT_EQ(ConfigKey(best), "BLOCK_SIZE=128 num_stages=3 num_warps=4");
}

TEST(Strategy, AutoPicksByContext) {
  StrategyContext ctx{Space1D()};
  EXPECT_EQ(ResolveAuto(ctx), "coordinate");
  ctx.moves = {"more_warps"};
  EXPECT_EQ(ResolveAuto(ctx), "rules");
  StrategyContext g{SpaceGemm()};
  EXPECT_EQ(ResolveAuto(g), "bayes");  // 6 params, 7500 configs
  EXPECT_FALSE(MakeStrategy("annealing", ctx).ok());
}

TEST(Halving, KeepsTheBestUnderNoisyShortTimings) {
  // True times 1.00 .. 1.19; rung 0 is noisy (+-8%), rung 1 nearly exact.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-0.08, 0.08);
  std::vector<double> truth, s0;
  for (int i = 0; i < 20; ++i) {
    truth.push_back(1.0 + 0.01 * ((i * 7) % 20));
    s0.push_back(truth.back() * (1 + u(rng)));
  }
  int best = static_cast<int>(std::min_element(truth.begin(), truth.end()) - truth.begin());
  int measured = 0;
  HalvingOptions o;
  o.eta = 3;
  o.keep = 2;
  o.max_rungs = 2;
  auto surv = SuccessiveHalving(s0, o, [&](size_t i, int rung) {
    ++measured;
    return truth[i] * (1 + 0.001 * rung * ((i % 3) - 1.0) / rung);
  });
  ASSERT_EQ(surv.size(), 2u);
  EXPECT_EQ(static_cast<int>(surv[0]), best);
  EXPECT_LE(measured, 7 + 2);  // ceil(20/3) then 2
}

TEST(Halving, FailuresNeverPromoted) {
  std::vector<double> s0 = {1.0, INFINITY, 0.5, NAN};
  HalvingOptions o;
  o.keep = 3;
  auto surv = SuccessiveHalving(s0, o, [&](size_t i, int) { return s0[i]; });
  ASSERT_EQ(surv.size(), 2u);
  EXPECT_EQ(surv[0], 2u);
  EXPECT_EQ(surv[1], 0u);
}

}  // namespace
}  // namespace kiln::search
