#include "diagnose/rules.h"

#include <gtest/gtest.h>

#include <set>

#include "diagnose/report.h"
#include "profile/metrics.h"

namespace kiln::diagnose {
namespace {

namespace m = profile::metric;
using profile::KernelProfile;

struct K {
  std::map<std::string, double> v;
  std::optional<exec::KernelFacts> facts;
  bool peaks = true;

  K& Set(const std::string& k, double x) {
    v[k] = x;
    return *this;
  }
  KernelProfile Build() const {
    KernelProfile kp;
    kp.row.name = "k";
    for (auto& [k, x] : v) kp.row.metrics[k] = {std::to_string(x), "", "", x};
    kp.facts = facts;
    static profile::DevicePeaks p = [] {
      profile::DevicePeaks d;
      d.dram_bytes_per_s = 3e12;
      d.matmul_flops_per_s = {{"float32", 50e12}, {"bfloat16", 750e12}};
      return d;
    }();
    kp.roofline = profile::ComputeRoofline(kp.row, peaks ? &p : nullptr);
    return kp;
  }
  Diagnosis Run(const Thresholds& t = {}) const { return Diagnose(Build(), t); }
};

// A latency-bound baseline: nothing else fires.
K Base() {
  K k;
  k.Set(m::kDuration, 1e-3).Set(m::kSmThroughput, 30).Set(m::kMemThroughput, 40);
  k.Set(m::kDramBytesRead, 1e9).Set(m::kWaves, 8).Set(m::kGridSize, 8448);
  k.Set(m::kTheoreticalOccupancy, 100).Set(m::kAchievedOccupancy, 95);
  k.Set(m::kIssueActive, 0.5).Set(m::kGlobalLdBytesPerSectorPct, 100);
  return k;
}

std::set<std::string> Rules(const Diagnosis& d) {
  std::set<std::string> s;
  for (const auto& f : d.findings) s.insert(f.rule);
  return s;
}
bool Fires(const Diagnosis& d, const std::string& r) { return Rules(d).count(r) > 0; }

TEST(Classify, BaselineIsLatencyBoundAndQuiet) {
  auto d = Base().Run();
  EXPECT_EQ(d.cls, BoundClass::kLatencyBound);
  EXPECT_EQ(Rules(d), std::set<std::string>{"latency_bound"});
}

TEST(Classify, LatencyThreshold60) {
  EXPECT_EQ(Base().Set(m::kMemThroughput, 59.9).Run().cls, BoundClass::kLatencyBound);
  EXPECT_EQ(Base().Set(m::kMemThroughput, 60.0).Run().cls, BoundClass::kMemoryBound);  // 60 >= 30 + 10
}

TEST(Classify, SmallGridWhenWavesBelowOne) {
  auto d = Base().Set(m::kWaves, 0.99).Run();
  EXPECT_EQ(d.cls, BoundClass::kSmallGrid);
  EXPECT_TRUE(Fires(d, "small_grid"));
  EXPECT_EQ(Base().Set(m::kWaves, 1.0).Run().cls, BoundClass::kLatencyBound);
  // Without the waves metric: grid smaller than the SM count.
  K k = Base();
  k.v.erase(m::kWaves);
  k.Set(m::kGridSize, 100).Set(m::kSmCount, 132);
  EXPECT_EQ(k.Run().cls, BoundClass::kSmallGrid);
}

TEST(Classify, BoundGap10Points) {
  auto near = Base().Set(m::kSmThroughput, 61).Set(m::kMemThroughput, 70.9);
  EXPECT_EQ(near.Run().cls, BoundClass::kBalanced);
  EXPECT_EQ(near.Set(m::kMemThroughput, 71).Run().cls, BoundClass::kMemoryBound);
  auto c = Base().Set(m::kSmThroughput, 75).Set(m::kMemThroughput, 65);
  EXPECT_EQ(c.Run().cls, BoundClass::kComputeBound);
  EXPECT_EQ(c.Set(m::kMemThroughput, 65.1).Run().cls, BoundClass::kBalanced);
}

TEST(Classify, NearRoof80ChangesSeverity) {
  auto a = Base().Set(m::kSmThroughput, 20).Set(m::kMemThroughput, 79.9).Run();
  auto b = Base().Set(m::kSmThroughput, 20).Set(m::kMemThroughput, 80).Run();
  EXPECT_EQ(a.findings[0].severity, FindingSeverity::kMajor);
  EXPECT_EQ(b.findings[0].severity, FindingSeverity::kMinor);
  EXPECT_NE(b.findings[0].message.find("near its roof"), std::string::npos);
}

TEST(AtRoofline, At95PercentOfMeasuredRoofStops) {
  // DRAM 1e9 bytes in 1 ms = 1 TB/s of 3 TB/s; scale bytes to hit 94.9% / 95%.
  auto below = Base().Set(m::kSmThroughput, 20).Set(m::kMemThroughput, 90).Set(m::kDramBytesRead, 0.949 * 3e9);
  auto at = Base().Set(m::kSmThroughput, 20).Set(m::kMemThroughput, 90).Set(m::kDramBytesRead, 0.95 * 3e9);
  EXPECT_EQ(below.Run().cls, BoundClass::kMemoryBound);
  auto d = at.Run();
  EXPECT_EQ(d.cls, BoundClass::kAtRoofline);
  EXPECT_EQ(d.findings.size(), 1u);
  EXPECT_TRUE(d.findings[0].moves.empty());
}

TEST(AtRoofline, SolFallbackWithoutPeaks) {
  K k = Base().Set(m::kSmThroughput, 20).Set(m::kMemThroughput, 94.9);
  k.peaks = false;
  EXPECT_EQ(k.Run().cls, BoundClass::kMemoryBound);
  k.Set(m::kMemThroughput, 95);
  EXPECT_EQ(k.Run().cls, BoundClass::kAtRoofline);
}

TEST(AtRoofline, SuppressesEverythingElse) {
  auto d = Base()
               .Set(m::kSmThroughput, 20)
               .Set(m::kMemThroughput, 92)
               .Set(m::kDramBytesRead, 2.97e9)
               .Set(m::kTheoreticalOccupancy, 50)
               .Set(m::kOccLimitRegisters, 2)
               .Set(m::kDuration, 1e-3)
               .Run();
  EXPECT_EQ(d.cls, BoundClass::kAtRoofline);
  EXPECT_EQ(Rules(d), std::set<std::string>{"at_roofline"});
  EXPECT_FALSE(d.gated.empty());
}

TEST(AtRoofline, NotWhenBytesAreWastedOrFp32DotOnCudaCores) {
  auto wasted = Base()
                    .Set(m::kSmThroughput, 20)
                    .Set(m::kMemThroughput, 95)
                    .Set(m::kDramBytesRead, 2.97e9)
                    .Set(m::kGlobalLdBytesPerSectorPct, 12.5)
                    .Run();
  EXPECT_EQ(wasted.cls, BoundClass::kMemoryBound);
  EXPECT_TRUE(Fires(wasted, "uncoalesced_global_access"));
  K dot = Base()
              .Set(m::kSmThroughput, 96)
              .Set(m::kMemThroughput, 20)
              .Set(m::kDramBytesRead, 1e8)
              .Set("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 0.5 * 49e9);  // 49 TFLOP/s of 50
  EXPECT_EQ(dot.Run().cls, BoundClass::kAtRoofline);
  dot.facts = exec::KernelFacts{};
  dot.facts->fp32_dot_without_tensor_cores = true;
  auto d = dot.Run();
  EXPECT_EQ(d.cls, BoundClass::kComputeBound);
  EXPECT_TRUE(Fires(d, "fp32_dot_without_tensor_cores"));
}

TEST(Occupancy, TheoreticalBelow80NamesTheLimiter) {
  auto k = Base()
               .Set(m::kOccLimitRegisters, 2)
               .Set(m::kOccLimitSharedMem, 4)
               .Set(m::kOccLimitBlocks, 32)
               .Set(m::kOccLimitWarps, 8)
               .Set(m::kAchievedOccupancy, 70);
  EXPECT_FALSE(Fires(k.Set(m::kTheoreticalOccupancy, 80).Run(), "occupancy_limited_registers"));
  EXPECT_TRUE(Fires(k.Set(m::kTheoreticalOccupancy, 79.9).Run(), "occupancy_limited_registers"));
  k.Set(m::kOccLimitSharedMem, 1);
  EXPECT_TRUE(Fires(k.Run(), "occupancy_limited_shared_memory"));
  k.Set(m::kOccLimitSharedMem, 4).Set(m::kOccLimitBlocks, 1);
  EXPECT_TRUE(Fires(k.Run(), "occupancy_limited_blocks"));
  k.Set(m::kOccLimitBlocks, 32).Set(m::kOccLimitWarps, 1);
  EXPECT_TRUE(Fires(k.Run(), "occupancy_limited_warps"));
}

TEST(Occupancy, AchievedMoreThan10PointsUnderTheoretical) {
  EXPECT_FALSE(Fires(Base().Set(m::kAchievedOccupancy, 90).Run(), "achieved_below_theoretical_occupancy"));
  EXPECT_TRUE(Fires(Base().Set(m::kAchievedOccupancy, 89.9).Run(), "achieved_below_theoretical_occupancy"));
}

TEST(Stalls, DominantAbove30PercentWhileIssueBelow08) {
  auto k = Base().Set(m::StallMetric("long_scoreboard"), 3).Set(m::StallMetric("wait"), 7);  // 30%
  EXPECT_FALSE(Fires(k.Run(), "dominant_stall_long_scoreboard"));
  EXPECT_FALSE(Fires(k.Run(), "dominant_stall_wait") && false);
  k.Set(m::StallMetric("long_scoreboard"), 7).Set(m::StallMetric("wait"), 3);  // 70%
  EXPECT_TRUE(Fires(k.Run(), "dominant_stall_long_scoreboard"));
  k.Set(m::StallMetric("long_scoreboard"), 3.01)
      .Set(m::StallMetric("wait"), 2)
      .Set(m::StallMetric("barrier"), 2)
      .Set(m::StallMetric("mio_throttle"), 2.99);  // 30.1%
  EXPECT_TRUE(Fires(k.Run(), "dominant_stall_long_scoreboard"));
  k.Set(m::kIssueActive, 0.8);
  EXPECT_FALSE(Fires(k.Run(), "dominant_stall_long_scoreboard"));
  // "selected" is issuing, not stalling: it never dominates.
  auto s = Base()
               .Set(m::StallMetric("selected"), 100)
               .Set(m::StallMetric("wait"), 1)
               .Set(m::StallMetric("barrier"), 1)
               .Set(m::StallMetric("mio_throttle"), 1)
               .Set(m::StallMetric("long_scoreboard"), 1);
  EXPECT_FALSE(Fires(s.Run(), "dominant_stall_selected"));
}

TEST(Spills, FromCompileFactsOrLocalMemoryInstructions) {
  K k = Base();
  EXPECT_FALSE(Fires(k.Run(), "register_spills"));
  k.facts = exec::KernelFacts{};
  k.facts->n_spills = 0;
  EXPECT_FALSE(Fires(k.Run(), "register_spills"));
  k.facts->n_spills = 1;
  EXPECT_TRUE(Fires(k.Run(), "register_spills"));
  K c = Base().Set(m::kLocalLdInst, 1);
  EXPECT_TRUE(Fires(c.Run(), "register_spills"));
}

TEST(Waves, PartialLastWaveCosting10Percent) {
  // waves 1.8: (1-0.8)/2 = 10% -> fires; 1.81: 9.5% -> not.
  EXPECT_TRUE(Fires(Base().Set(m::kWaves, 1.8).Run(), "partial_last_wave"));
  EXPECT_FALSE(Fires(Base().Set(m::kWaves, 1.81).Run(), "partial_last_wave"));
  EXPECT_FALSE(Fires(Base().Set(m::kWaves, 2.0).Run(), "partial_last_wave"));
  EXPECT_TRUE(Fires(Base().Set(m::kWaves, 1.05).Run(), "partial_last_wave"));
}

TEST(Coalescing, SectorUseBelow60Percent) {
  EXPECT_FALSE(Fires(Base().Set(m::kGlobalLdBytesPerSectorPct, 60).Run(), "uncoalesced_global_access"));
  EXPECT_TRUE(Fires(Base().Set(m::kGlobalLdBytesPerSectorPct, 59.9).Run(), "uncoalesced_global_access"));
  EXPECT_TRUE(Fires(Base().Set(m::kGlobalStBytesPerSectorPct, 25).Run(), "uncoalesced_global_access"));
  // 0 = no LSU global loads (e.g. TMA): nothing to judge.
  EXPECT_FALSE(Fires(Base().Set(m::kGlobalLdBytesPerSectorPct, 0).Run(), "uncoalesced_global_access"));
}

TEST(BankConflicts, TenPercentOfWavefronts) {
  auto k = Base().Set(m::kSharedLdWavefronts, 1000).Set(m::kSharedLdBankConflicts, 99);
  EXPECT_FALSE(Fires(k.Run(), "shared_bank_conflicts"));
  k.Set(m::kSharedLdBankConflicts, 100);
  EXPECT_TRUE(Fires(k.Run(), "shared_bank_conflicts"));
}

TEST(Fp32Dot, StaticFactAndIdleTensorPipe) {
  K k = Base().Set(m::kSmThroughput, 80).Set(m::kMemThroughput, 30);
  EXPECT_FALSE(Fires(k.Run(), "fp32_dot_without_tensor_cores"));
  k.facts = exec::KernelFacts{};
  k.facts->fp32_dot_without_tensor_cores = true;
  EXPECT_TRUE(Fires(k.Set(m::kTensorPipeActive, 4.9).Run(), "fp32_dot_without_tensor_cores"));
  EXPECT_FALSE(Fires(k.Set(m::kTensorPipeActive, 5).Run(), "fp32_dot_without_tensor_cores"));
}

TEST(TinyKernel, Below5Microseconds) {
  EXPECT_TRUE(Fires(Base().Set(m::kDramBytesRead, 4096).Set(m::kDuration, 4.99e-6).Run(), "launch_bound_tiny_kernel"));
  EXPECT_FALSE(Fires(Base().Set(m::kDramBytesRead, 4096).Set(m::kDuration, 5e-6).Run(), "launch_bound_tiny_kernel"));
}

// --- Fixes from the H200 recordings (tests/profile/data) -------------------------------------

std::vector<Move> ClassMoves(const Diagnosis& d) { return d.findings.at(0).moves; }
std::set<Move> AllMoves(const Diagnosis& d) {
  std::set<Move> s;
  for (const auto& f : d.findings) s.insert(f.moves.begin(), f.moves.end());
  return s;
}

// transpose_naive: memory SOL 97.7% is L2 (lts 97.7%), DRAM only 23%, loads use 12.5% of each
// sector. The class names L2 and leads with coalescing (major), not bigger tiles / eviction hints.
TEST(MemoryBound, NamesTheBusyUnitAndLeadsWithCoalescingWhenBytesAreWasted) {
  K k = Base()
            .Set(m::kSmThroughput, 6.9)
            .Set(m::kMemThroughput, 97.7)
            .Set(m::kDramThroughput, 23.1)
            .Set(m::kL2Throughput, 97.7)
            .Set(m::kL1Throughput, 61)
            .Set(m::kGlobalLdBytesPerSectorPct, 12.5)
            .Set(m::kGlobalStBytesPerSectorPct, 100);
  auto d = k.Run();
  ASSERT_EQ(d.cls, BoundClass::kMemoryBound);
  EXPECT_EQ(d.findings[0].severity, FindingSeverity::kMajor);
  EXPECT_EQ(ClassMoves(d), std::vector<Move>{Move::kCoalesceAccess});
  EXPECT_NE(d.findings[0].message.find("L2"), std::string::npos) << d.findings[0].message;
  EXPECT_TRUE(Fires(d, "uncoalesced_global_access"));
  // L2 busy without waste: named, usual moves.
  auto clean = k.Set(m::kGlobalLdBytesPerSectorPct, 100).Run();
  EXPECT_NE(clean.findings[0].message.find("the busy unit is L2"), std::string::npos);
  EXPECT_NE(ClassMoves(clean), std::vector<Move>{Move::kCoalesceAccess});
  // DRAM within 10 points of L2: DRAM is the unit, not named as L2.
  auto dram = k.Set(m::kDramThroughput, 88).Run();
  EXPECT_EQ(dram.findings[0].message.find("busy unit"), std::string::npos);
}

// softmax_spill: memory-bound at 88% with 124 spilled registers. Bigger tiles would spill more;
// the spill fix (smaller tiles, fewer stages, more warps) must survive the move conflicts, and
// fewer stages wins over a long-scoreboard stall's more stages.
TEST(MemoryBound, SpillingKernelIsNotToldBiggerTiles) {
  K k = Base()
            .Set(m::kSmThroughput, 18.4)
            .Set(m::kMemThroughput, 77.8)
            .Set(m::kDramThroughput, 77.8)
            .Set(m::kL2Throughput, 84.6)
            .Set(m::kLocalLdInst, 2.2e6)
            .Set(m::kLocalStInst, 2.0e6)
            .Set(m::kTheoreticalOccupancy, 12.5)
            .Set(m::kOccLimitRegisters, 2)
            .Set(m::StallMetric("long_scoreboard"), 5.3)
            .Set(m::StallMetric("wait"), 1.6)
            .Set(m::kIssueActive, 0.19);
  auto d = k.Run();
  ASSERT_EQ(d.cls, BoundClass::kMemoryBound);
  auto moves = AllMoves(d);
  EXPECT_FALSE(moves.count(Move::kBiggerTiles));
  EXPECT_FALSE(moves.count(Move::kMoreStages));
  EXPECT_TRUE(moves.count(Move::kSmallerTiles));
  EXPECT_TRUE(moves.count(Move::kFewerStages));
  EXPECT_TRUE(Fires(d, "register_spills"));
  EXPECT_TRUE(Fires(d, "occupancy_limited_registers"));
  EXPECT_EQ(d.findings.at(1).rule, "register_spills");  // root cause first among the details
  // Without spills the usual memory-bound moves come back.
  auto no = k.Set(m::kLocalLdInst, 0).Set(m::kLocalStInst, 0).Run();
  EXPECT_TRUE(AllMoves(no).count(Move::kBiggerTiles));
}

// small_grid (row sums): one scalar store per program reads as 12.5% sector use, but 128 bytes of
// stores against 8.4 MB of loads cost nothing. Stores are judged only at >= 5% of the traffic.
TEST(Coalescing, NegligibleStoresAreNotJudged) {
  K k = Base().Set(m::kGlobalStBytesPerSectorPct, 12.5).Set(m::kDramBytesRead, 8.4e6).Set(m::kDramBytesWrite, 0);
  EXPECT_FALSE(Fires(k.Run(), "uncoalesced_global_access"));
  // DRAM writes at 5% of the bytes: judged.
  k.Set(m::kDramBytesRead, 95e6).Set(m::kDramBytesWrite, 5e6);
  EXPECT_TRUE(Fires(k.Run(), "uncoalesced_global_access"));
  k.Set(m::kDramBytesWrite, 4.9e6);
  EXPECT_FALSE(Fires(k.Run(), "uncoalesced_global_access"));
  // Store sectors, when recorded, decide instead of DRAM bytes.
  k.Set(m::kGlobalLdSectors, 1000).Set(m::kGlobalStSectors, 60);
  EXPECT_TRUE(Fires(k.Run(), "uncoalesced_global_access"));
  k.Set(m::kGlobalStSectors, 40);
  EXPECT_FALSE(Fires(k.Run(), "uncoalesced_global_access"));
  // Loads are always judged.
  EXPECT_TRUE(Fires(k.Set(m::kGlobalLdBytesPerSectorPct, 12.5).Run(), "uncoalesced_global_access"));
}

// tiny: 4 programs, 2.3 us. Splitting the work further cannot beat the launch; the class says fuse.
// dequantize_rowwise on an H200: 2^19 programs (248 waves), each loading 128 bytes and storing 256.
TEST(SmallPrograms, ManyWavesOfAFewHundredBytesAskForRowsPerProgram) {
  auto tiny_rows = [] {
    return Base()
        .Set(m::kWaves, 248)
        .Set(m::kGridSize, 524288)
        .Set(m::kGlobalLdSectors, 524288.0 * 4)
        .Set(m::kGlobalStSectors, 524288.0 * 8);
  };
  auto d = tiny_rows().Run();
  ASSERT_TRUE(Fires(d, "many_small_programs"));
  for (const auto& f : d.findings) {
    if (f.rule == "many_small_programs") {
      EXPECT_EQ(f.moves, (std::vector<Move>{Move::kMultipleRowsPerProgram, Move::kFewerWarps}));
      EXPECT_NE(f.message.find("each move only 384 bytes (global sectors)"), std::string::npos) << f.message;
    }
    // More warps add nothing in flight for such rows: the class finding no longer asks for them.
    if (f.is_class) EXPECT_EQ(std::count(f.moves.begin(), f.moves.end(), Move::kMoreWarps), 0);
  }
  // Above 4096 bytes a program, or below 8 waves: quiet.
  EXPECT_FALSE(Fires(tiny_rows().Set(m::kGlobalLdSectors, 524288.0 * 125).Run(), "many_small_programs"));
  EXPECT_FALSE(Fires(tiny_rows().Set(m::kWaves, 7.9).Run(), "many_small_programs"));
  // Without sector counts, DRAM bytes stand in.
  K k = tiny_rows();
  k.v.erase(m::kGlobalLdSectors);
  k.v.erase(m::kGlobalStSectors);
  k.Set(m::kDramBytesRead, 524288.0 * 128).Set(m::kDramBytesWrite, 524288.0 * 256);
  EXPECT_TRUE(Fires(k.Run(), "many_small_programs"));
}

TEST(SmallGrid, TinyKernelIsToldToFuseNotToSplit) {
  K k = Base().Set(m::kWaves, 0.004).Set(m::kGridSize, 4).Set(m::kDramBytesRead, 36096);
  auto big = k.Set(m::kDuration, 5e-6).Run();
  ASSERT_EQ(big.cls, BoundClass::kSmallGrid);
  EXPECT_EQ(ClassMoves(big), std::vector<Move>{Move::kSmallerTiles});
  auto tiny = k.Set(m::kDuration, 2.34e-6).Run();
  ASSERT_EQ(tiny.cls, BoundClass::kSmallGrid);
  EXPECT_EQ(ClassMoves(tiny), std::vector<Move>{Move::kFuse});
  EXPECT_TRUE(Fires(tiny, "launch_bound_tiny_kernel"));
}

// partial_wave: an FMA chain at 74% of the FP32 pipe (75% SM SOL) with 1.15 waves was "96% of the
// float32 roof" against the measured sgemm and stopped at at_roofline, hiding the tail. With the
// pipe as the roof it is compute-bound and the partial last wave is reported.
TEST(Waves, PartialWaveComputeKernelIsNotAtTheRoofline) {
  K k = Base()
            .Set(m::kDuration, 103.1e-6)
            .Set(m::kSmThroughput, 75)
            .Set(m::kMemThroughput, 0.3)
            .Set(m::kDramBytesRead, 1.25e6)
            .Set("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.4e9)
            .Set(m::kWaves, 1.15)
            .Set(m::kTheoreticalOccupancy, 100)
            .Set(m::kAchievedOccupancy, 77.6)
            .Set(m::kSmCount, 132)
            .Set(m::kSmFrequency, 1.97e9);
  // Base's peaks: float32 50 TFLOP/s measured. 4.8e9 FLOP / 103.1 us = 46.6 TFLOP/s = 93% of it.
  k.Set("device__attribute_compute_capability_major", 9).Set("device__attribute_compute_capability_minor", 0);
  auto d = k.Run();
  EXPECT_EQ(d.cls, BoundClass::kComputeBound);
  EXPECT_TRUE(Fires(d, "partial_last_wave"));
  EXPECT_NE(d.findings[0].message.find("pipe peak"), std::string::npos) << d.findings[0].message;
  // At 96% of the pipe it is at the roofline (and the tail is suppressed).
  auto at = k.Set("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 0.96 * 132 * 128 * 2 * 1.97e9 * 103.1e-6 / 2)
                .Set(m::kSmThroughput, 96)
                .Run();
  EXPECT_EQ(at.cls, BoundClass::kAtRoofline);
}

// Gating: the advice never contradicts the class.
TEST(Gating, MemoryBoundIsNotToldAboutComputePipes) {
  K k = Base()
            .Set(m::kSmThroughput, 20)
            .Set(m::kMemThroughput, 85)
            .Set(m::kDramBytesRead, 0.85 * 3e9)
            .Set(m::StallMetric("math_pipe_throttle"), 9)
            .Set(m::StallMetric("wait"), 1);
  k.facts = exec::KernelFacts{};
  k.facts->fp32_dot_without_tensor_cores = true;
  auto d = k.Run();
  EXPECT_EQ(d.cls, BoundClass::kMemoryBound);
  EXPECT_FALSE(Fires(d, "dominant_stall_math_pipe_throttle"));
  EXPECT_FALSE(Fires(d, "fp32_dot_without_tensor_cores"));
  EXPECT_FALSE(Fires(d, "compute_bound"));
  std::set<std::string> gated(d.gated.begin(), d.gated.end());
  EXPECT_TRUE(gated.count("dominant_stall_math_pipe_throttle"));
}

TEST(Gating, ComputeBoundIsNotToldAboutOccupancyOrCoalescing) {
  auto d = Base()
               .Set(m::kSmThroughput, 85)
               .Set(m::kMemThroughput, 40)
               .Set(m::kTheoreticalOccupancy, 12.5)
               .Set(m::kOccLimitSharedMem, 1)
               .Set(m::kGlobalLdBytesPerSectorPct, 30)
               .Set(m::StallMetric("long_scoreboard"), 9)
               .Set(m::StallMetric("wait"), 1)
               .Run();
  EXPECT_EQ(d.cls, BoundClass::kComputeBound);
  for (const char* r : {"occupancy_limited_shared_memory", "uncoalesced_global_access",
                        "dominant_stall_long_scoreboard", "achieved_below_theoretical_occupancy"}) {
    EXPECT_FALSE(Fires(d, r)) << r;
  }
}

TEST(Gating, SmallGridIsNotToldAboutOccupancyOrTails) {
  auto d = Base()
               .Set(m::kWaves, 0.5)
               .Set(m::kTheoreticalOccupancy, 50)
               .Set(m::kOccLimitRegisters, 2)
               .Set(m::kAchievedOccupancy, 10)
               .Run();
  EXPECT_EQ(d.cls, BoundClass::kSmallGrid);
  EXPECT_FALSE(Fires(d, "occupancy_limited_registers"));
  EXPECT_FALSE(Fires(d, "achieved_below_theoretical_occupancy"));
}

TEST(Gating, NoContradictoryMovesEver) {
  // Spills (smaller tiles, fewer stages) under a latency class (more stages) and a compute class
  // (bigger tiles): the class's moves win, the contradicting ones are dropped.
  for (double sm : {30.0, 85.0}) {
    K k = Base()
              .Set(m::kSmThroughput, sm)
              .Set(m::kLocalLdInst, 10)
              .Set(m::kTheoreticalOccupancy, 40)
              .Set(m::kOccLimitRegisters, 1)
              .Set(m::kWaves, 1.3);
    auto d = k.Run();
    std::set<Move> moves;
    for (const auto& f : d.findings) moves.insert(f.moves.begin(), f.moves.end());
    for (Move mv : moves) {
      for (Move o : OpposingMoves(mv)) EXPECT_FALSE(moves.count(o)) << MoveName(mv) << " vs " << MoveName(o);
    }
    EXPECT_TRUE(Fires(d, "register_spills"));
  }
}

TEST(Findings, JsonAndText) {
  auto d = Base().Set(m::kLocalLdInst, 10).Run();
  auto j = ToJson(d);
  EXPECT_EQ(j["class"], "latency_bound");
  bool found = false;
  for (const auto& f : j["findings"]) {
    if (f["rule"] == "register_spills") {
      found = true;
      EXPECT_EQ(f["severity"], "major");
      EXPECT_EQ(f["evidence"][0]["metric"], m::kLocalLdInst);
      EXPECT_EQ(f["evidence"][0]["op"], ">");
    }
  }
  EXPECT_TRUE(found);
  std::string t = FormatFinding(d.findings[0]);
  EXPECT_NE(t.find("[major] latency_bound"), std::string::npos);
  EXPECT_EQ(MoveFromName("group_m_swizzle"), Move::kGroupMSwizzle);
  EXPECT_FALSE(MoveFromName("nope"));
}

TEST(Findings, MissingThroughputIsUnclassifiedNotACrash) {
  K k;
  k.Set(m::kDuration, 1e-3);
  auto d = k.Run();
  EXPECT_EQ(d.cls, BoundClass::kUnknown);
  EXPECT_FALSE(d.missing_metrics.empty());
}

TEST(Report, HtmlIsSelfContainedWithRoofs) {
  profile::ProfileRun run;
  run.kernels.push_back(Base().Set("sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1e11).Build());
  run.kernels[0].row.name = "a<b>&c";
  profile::DeviceRecord dev;
  dev.info.name = "GPU";
  dev.peaks.dram_bytes_per_s = 3e12;
  dev.peaks.matmul_flops_per_s = {{"bfloat16", 750e12}};
  run.device = dev;
  auto rep = DiagnoseRun(run);
  std::string h = RenderHtml(rep);
  EXPECT_NE(h.find("<svg"), std::string::npos);
  EXPECT_NE(h.find("bfloat16 750 TFLOP/s"), std::string::npos);
  EXPECT_NE(h.find("a&lt;b&gt;&amp;c"), std::string::npos);
  EXPECT_EQ(h.find("a<b>"), std::string::npos);
  EXPECT_EQ(h.find("https://"), std::string::npos);
  EXPECT_NE(FormatText(rep).find("class: latency_bound"), std::string::npos);
}

}  // namespace
}  // namespace kiln::diagnose
