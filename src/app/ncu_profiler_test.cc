// The optimizer's profiler diagnoses with the static facts of what it profiled, as `kiln profile`
// does: a tl.dot with input_precision="ieee" on fp32 inputs is fp32_dot_without_tensor_cores in both.
// Runs the GPU path on a CPU machine: a fake GPU worker (--python) and a fake ncu printing a CSV
// recorded for that kernel (tests/search).
#include "app/ncu_profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "app/facts_join.h"
#include "common/file.h"
#include "diagnose/report.h"
#include "profile/profile_task.h"
#include "task/task.h"

namespace kiln::app {
namespace {

const std::string kSrc = KILN_SOURCE_DIR;

bool HasRule(const std::vector<search::FindingView>& fs, const std::string& rule) {
  for (const auto& f : fs)
    if (f.rule == rule) return true;
  return false;
}

TEST(NcuProfiler, JoinsTheStaticFactsOfTheProfiledSource) {
  setenv("FAKE_NCU_CSV", (kSrc + "/tests/profile/synthetic/gemm_fp32_ieee.csv").c_str(), 1);
  setenv("FAKE_GPU_KERNEL", "gemm_fp32_ieee_kernel", 1);
  task::LoadOptions lo;
  lo.entry = "gemm";
  lo.bench = kSrc + "/tests/search/data/gemm_ieee/bench.py";
  auto spec = task::LoadTask(kSrc + "/tests/search/data/gemm_ieee/gemm.py", lo);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto device = profile::LoadDeviceRecordFile(kSrc + "/tests/profile/synthetic/device.json");
  ASSERT_TRUE(device.ok()) << device.status().message();
  NcuProfiler prof("gemm_fp32_ieee_kernel", *device, kSrc + "/tests/search/fake_gpu_python.py",
                   kSrc + "/tests/search/fake_ncu.sh");
  const Status available = prof.Available();
  ASSERT_TRUE(available.ok()) << available.message();
  auto source = ReadFile(spec->path);
  ASSERT_TRUE(source.ok());
  auto p = prof.Profile(*spec, *source, "square");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->kernel, "gemm_fp32_ieee_kernel");
  EXPECT_TRUE(HasRule(p->findings, "fp32_dot_without_tensor_cores")) << p->raw.dump(2);
  for (const auto& f : p->findings)
    if (f.rule == "fp32_dot_without_tensor_cores") {
      EXPECT_NE(std::find(f.moves.begin(), f.moves.end(), "precision"), f.moves.end());
    }
  // The same recording without the source's facts: the rule cannot fire (the counters alone do not
  // say the dot asked for ieee precision).
  auto run = profile::ProfileFromCsv(kSrc + "/tests/profile/synthetic/gemm_fp32_ieee.csv", {}, *device);
  ASSERT_TRUE(run.ok()) << run.status().message();
  auto bare = diagnose::DiagnoseRun(*run);
  ASSERT_FALSE(bare.diagnoses.empty());
  bool fired = false;
  for (const auto& f : bare.diagnoses[0].findings) fired |= f.rule == "fp32_dot_without_tensor_cores";
  EXPECT_FALSE(fired);
  unsetenv("FAKE_NCU_CSV");
  unsetenv("FAKE_GPU_KERNEL");
}

TEST(FactsJoin, StaticFactsFillTheKernelsFactsAndGivenOnesWin) {
  profile::ProfileRun run;
  profile::KernelProfile k;
  k.row.name = "gemm_fp32_ieee_kernel";
  run.kernels.push_back(k);
  exec::KernelFacts given;
  given.name = "gemm_fp32_ieee_kernel";
  given.n_regs = 96;
  auto text = ReadFile(kSrc + "/tests/search/data/gemm_ieee/gemm.py");
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(JoinFacts(&run, SourceText{*text, "gemm.py"}, {given}).ok());
  ASSERT_TRUE(run.kernels[0].facts.has_value());
  EXPECT_TRUE(run.kernels[0].facts->fp32_dot_without_tensor_cores);
  EXPECT_TRUE(run.kernels[0].facts->has_dot);
  EXPECT_EQ(run.kernels[0].facts->n_regs, 96);
  // A module the analysis cannot read: its error comes back, the given facts are still joined.
  profile::ProfileRun run2;
  run2.kernels.push_back(k);
  Status s = JoinFacts(&run2, SourceText{"def f(:\n", "bad.py"}, {given});
  EXPECT_TRUE(run2.kernels[0].facts.has_value());
  EXPECT_EQ(run2.kernels[0].facts->n_regs, 96);
  (void)s;
}

TEST(FindingView, ConvertsDiagnoseFindings) {
  diagnose::Finding f;
  f.rule = "memory_bound_headroom";
  f.severity = diagnose::FindingSeverity::kMajor;
  f.message = "m";
  f.moves = {diagnose::Move::kGroupMSwizzle, diagnose::Move::kMultipleRowsPerProgram, diagnose::Move::kMoreWarps};
  f.evidence.push_back({"sm__throughput", 12.5, "%", 60.0, "<"});
  auto v = ToFindingView(f);
  EXPECT_EQ(v.rule, "memory_bound_headroom");
  EXPECT_EQ(v.severity, "major");
  EXPECT_EQ(v.moves, (std::vector<std::string>{"group_m", "bigger_block", "rows_per_program", "more_warps"}));
  ASSERT_TRUE(v.evidence.is_array());
  EXPECT_EQ(v.evidence[0]["metric"], "sm__throughput");
}

}  // namespace
}  // namespace kiln::app
