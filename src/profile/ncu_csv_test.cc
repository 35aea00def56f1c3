#include "profile/ncu_csv.h"

#include <gtest/gtest.h>

#include "profile/metrics.h"
#include "profile/ncu_runner.h"
#include "profile/roofline.h"

namespace kiln::profile {
namespace {

const char* kTwo =
    "==PROF== Connected to process 1 (/usr/bin/python3)\n"
    "some program output, not CSV\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\","
    "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"sm__cycles_elapsed.avg.per_second\",\"launch__grid_size\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"usecond\",\"%\",\"cycle/nsecond\",\"\"\n"
    "\"0\",\"1\",\"python3\",\"h\",\"void k<256, 1>(float*, int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(1024, 1, "
    "1)\",\"0\",\"9.0\","
    "\"1,073.74\",\"12.5\",\"45.2\",\"1.98\",\"1,024\"\n"
    "==PROF== progress line in the middle\n"
    "\"1\",\"1\",\"python3\",\"h\",\"k2\",\"1\",\"7\",\"(64, 1, 1)\",\"(8, 1, "
    "1)\",\"0\",\"9.0\",\"n/a\",\"37.5\",\"\",\"1.98\",\"8\"\n"
    "==PROF== Disconnected from process 1\n";

TEST(NcuCsv, ParsesHeaderUnitsAndRows) {
  auto r = ParseNcuRawCsv(kTwo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->kernels.size(), 2u);
  EXPECT_EQ(r->metric_names.size(), 5u);
  EXPECT_EQ(r->messages.size(), 3u);
  const auto& k = r->kernels[0];
  EXPECT_EQ(k.name, "void k<256, 1>(float*, int)");  // commas inside quotes
  EXPECT_EQ(k.id, 0);
  EXPECT_EQ(k.grid_size, "(1024, 1, 1)");
  EXPECT_DOUBLE_EQ(*k.Get("dram__bytes_read.sum"), 1073.74e6);  // thousands separator + Mbyte
  EXPECT_EQ(k.Find("dram__bytes_read.sum")->base_unit, "byte");
  EXPECT_NEAR(*k.Get("gpu__time_duration.sum"), 12.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(*k.Get("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 45.2);
  EXPECT_NEAR(*k.Get("sm__cycles_elapsed.avg.per_second"), 1.98e9, 1);
  EXPECT_EQ(k.Find("sm__cycles_elapsed.avg.per_second")->base_unit, "hz");
  EXPECT_DOUBLE_EQ(*k.Get("launch__grid_size"), 1024);
  const auto& k2 = r->kernels[1];
  EXPECT_FALSE(k2.Get("dram__bytes_read.sum").has_value());  // n/a
  EXPECT_EQ(k2.Find("dram__bytes_read.sum")->raw, "n/a");
  EXPECT_FALSE(k2.Get("sm__throughput.avg.pct_of_peak_sustained_elapsed").has_value());  // empty
  EXPECT_FALSE(k2.Get("no_such_metric").has_value());
}

TEST(NcuCsv, HeaderWithoutRowsIsEmptyNotError) {
  auto r =
      ParseNcuRawCsv("\"ID\",\"Kernel Name\",\"x.sum\"\n\"\",\"\",\"byte\"\n==WARNING== No kernels were profiled.\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->kernels.empty());
  EXPECT_EQ(r->messages.size(), 1u);
}

TEST(NcuCsv, Errors) {
  EXPECT_FALSE(ParseNcuRawCsv("==ERROR== ERR_NVGPUCTRPERM\n").ok());
  EXPECT_FALSE(ParseNcuRawCsv("").ok());
  auto bad = ParseNcuRawCsv("\"ID\",\"Kernel Name\",\"x.sum\"\n\"\",\"\",\"\"\n\"0\",\"k\"\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("2 cells"), std::string::npos);
}

TEST(NcuCsv, Numbers) {
  EXPECT_DOUBLE_EQ(*ParseNcuNumber("1,234,567.5"), 1234567.5);
  EXPECT_DOUBLE_EQ(*ParseNcuNumber(" 4.0e-05 "), 4e-5);
  EXPECT_DOUBLE_EQ(*ParseNcuNumber("-3"), -3);
  EXPECT_FALSE(ParseNcuNumber("n/a"));
  EXPECT_FALSE(ParseNcuNumber(""));
  EXPECT_FALSE(ParseNcuNumber("(128, 1, 1)"));
  EXPECT_FALSE(ParseNcuNumber("12abc"));
}

TEST(NcuCsv, Units) {
  EXPECT_DOUBLE_EQ(NormaliseUnit("Kbyte").factor, 1e3);
  EXPECT_DOUBLE_EQ(NormaliseUnit("Gbyte").factor, 1e9);
  EXPECT_DOUBLE_EQ(NormaliseUnit("Mibyte").factor, 1048576.0);
  EXPECT_EQ(NormaliseUnit("Tbyte/second").base, "byte/second");
  EXPECT_DOUBLE_EQ(NormaliseUnit("Tbyte/second").factor, 1e12);
  EXPECT_DOUBLE_EQ(NormaliseUnit("nsecond").factor, 1e-9);
  EXPECT_DOUBLE_EQ(NormaliseUnit("msecond").factor, 1e-3);
  EXPECT_EQ(NormaliseUnit("usecond").base, "second");
  EXPECT_DOUBLE_EQ(NormaliseUnit("Mhz").factor, 1e6);
  EXPECT_EQ(NormaliseUnit("Ghz").base, "hz");
  EXPECT_EQ(NormaliseUnit("%").base, "%");
  EXPECT_EQ(NormaliseUnit("inst").base, "inst");
  EXPECT_DOUBLE_EQ(NormaliseUnit("Minst").factor, 1e6);
  EXPECT_EQ(NormaliseUnit("register/thread").base, "register/thread");
  EXPECT_DOUBLE_EQ(NormaliseUnit("register/thread").factor, 1);
  EXPECT_DOUBLE_EQ(NormaliseUnit("ns").factor, 1e-9);
}

TEST(NcuCsv, SmSmspAlias) {
  NcuKernelRow row;
  row.metrics["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] = {"10", "", "", 10.0};
  EXPECT_DOUBLE_EQ(*row.Get("sm__sass_thread_inst_executed_op_ffma_pred_on.sum"), 10);
}

TEST(NcuCsv, SplitCsvQuotes) {
  auto c = SplitCsvLine(R"("a","b ""q"", c",,"")");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1], "b \"q\", c");
  EXPECT_EQ(c[2], "");
}

// --- runner: command line and failure classification ----------------------------------------

TEST(NcuRunner, CommandLine) {
  NcuOptions o;
  o.metrics = {"a.sum", "b.pct"};
  o.kernel_regex = "matmul";
  o.launch_skip = 2;
  o.launch_count = 3;
  auto argv = BuildNcuArgv(o, "/x/ncu", {"python3", "-m", "kiln_worker", "--request", "r.json"});
  std::string s = ShellJoin(argv);
  EXPECT_EQ(s,
            "/x/ncu --clock-control none --print-units base --csv --page raw --metrics a.sum,b.pct -k "
            "regex:matmul --launch-skip 2 --launch-count 3 --target-processes all python3 -m kiln_worker "
            "--request r.json");
  o.nvtx_include = "kiln_profile/";
  o.launch_count = 0;
  s = ShellJoin(BuildNcuArgv(o, "ncu", {"p"}));
  EXPECT_NE(s.find("--nvtx --nvtx-include kiln_profile/"), std::string::npos);
  EXPECT_EQ(s.find("--launch-count"), std::string::npos);
}

NcuOutcome Outcome(std::string out, std::string err, int code, bool timed_out = false) {
  NcuOutcome o;
  o.run.out = std::move(out);
  o.run.err = std::move(err);
  o.run.exit.exited = true;
  o.run.exit.code = code;
  o.run.timed_out = timed_out;
  o.parsed = ParseNcuRawCsv(o.run.out);
  return o;
}

TEST(NcuRunner, ClassifiesFailures) {
  std::vector<std::string> metrics = {"gpu__time_duration.sum", "sm__bogus.sum"};
  auto perm =
      ClassifyNcuOutcome(Outcome("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                                 "Performance Counters on the target device 0.\n",
                                 "", 0),
                         metrics, ".");
  EXPECT_EQ(perm.failure, NcuFailure::kNoPermission);
  EXPECT_NE(perm.status.message().find("NVreg_RestrictProfilingToAdminUsers"), std::string::npos);

  auto crash =
      ClassifyNcuOutcome(Outcome("==PROF== Connected\n", "Traceback...\nRuntimeError: CUDA error\n", 1), metrics, ".");
  EXPECT_EQ(crash.failure, NcuFailure::kTargetCrashed);
  EXPECT_NE(crash.status.message().find("RuntimeError: CUDA error"), std::string::npos);
  EXPECT_NE(crash.status.message().find("exit code 1"), std::string::npos);

  auto none = ClassifyNcuOutcome(Outcome("==WARNING== No kernels were profiled.\n", "", 0), metrics, "foo");
  EXPECT_EQ(none.failure, NcuFailure::kKernelNotFound);
  EXPECT_NE(none.status.message().find("regex:foo"), std::string::npos);

  auto unknown = ClassifyNcuOutcome(Outcome("==ERROR== Failed to find metric sm__bogus.sum\n", "", 1), metrics, ".");
  EXPECT_EQ(unknown.failure, NcuFailure::kUnknownMetric);
  ASSERT_EQ(unknown.unknown_metrics.size(), 1u);
  EXPECT_EQ(unknown.unknown_metrics[0], "sm__bogus.sum");

  auto to = ClassifyNcuOutcome(Outcome("", "", -1, true), metrics, ".");
  EXPECT_EQ(to.failure, NcuFailure::kTimeout);

  std::string good = std::string("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n") +
                     "\"0\",\"k\",\"1,000\"\n";
  EXPECT_EQ(ClassifyNcuOutcome(Outcome(good, "", 0), metrics, ".").failure, NcuFailure::kNone);
  // Rows but a non-zero exit (the program failed after the profiled launch): keep the rows.
  EXPECT_EQ(ClassifyNcuOutcome(Outcome(good, "", 3), metrics, ".").failure, NcuFailure::kNone);
}

TEST(NcuRunner, RetriesWithoutUnknownMetricsAndReportsMissingNcu) {
  int calls = 0;
  std::vector<std::string> seen;
  CommandExecutor fake = [&](const SpawnOptions& so, std::chrono::milliseconds) -> Result<RunResult> {
    ++calls;
    std::string list;
    for (size_t i = 0; i + 1 < so.argv.size(); ++i) {
      if (so.argv[i] == "--metrics") list = so.argv[i + 1];
    }
    seen.push_back(list);
    RunResult r;
    r.exit.exited = true;
    if (list.find("sm__bogus.sum") != std::string::npos) {
      r.exit.code = 1;
      r.out = "==ERROR== Failed to find metric sm__bogus.sum\n";
    } else {
      r.exit.code = 0;
      r.out = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n\"0\",\"k\",\"5\"\n";
    }
    return r;
  };
  NcuOptions o;
  o.ncu_path = "/bin/true";  // exists; the fake never runs it
  o.metrics = {"gpu__time_duration.sum", "sm__bogus.sum"};
  NcuRunner runner(o, fake);
  auto run = runner.Run({"python3", "x.py"});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(seen[1], "gpu__time_duration.sum");
  ASSERT_EQ(run->dropped_metrics.size(), 1u);
  EXPECT_NEAR(*run->report.kernels[0].Get("gpu__time_duration.sum"), 5e-9, 1e-18);

  NcuOptions missing;
  missing.ncu_path = "/nonexistent/ncu";
  NcuRunner r2(missing, fake);
  auto bad = r2.Run({"x"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(r2.last_failure(), NcuFailure::kNcuMissing);
  EXPECT_EQ(bad.status().code(), Code::kUnavailable);
}

TEST(Metrics, ListHasDesignMetricsAndFlopCounters) {
  const auto& l = DefaultMetrics();
  auto has = [&](const std::string& m) { return std::find(l.begin(), l.end(), m) != l.end(); };
  EXPECT_TRUE(has("gpu__time_duration.sum"));
  EXPECT_TRUE(has("launch__occupancy_limit_shared_mem"));
  EXPECT_TRUE(has("smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio"));
  EXPECT_TRUE(has("sm__sass_thread_inst_executed_op_hfma_pred_on.sum"));
  EXPECT_TRUE(has("sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
  std::set<std::string> uniq(l.begin(), l.end());
  EXPECT_EQ(uniq.size(), l.size());
}

// --- roofline ----------------------------------------------------------------------------------

NcuKernelRow Row(std::map<std::string, double> v) {
  NcuKernelRow r;
  r.name = "k";
  for (auto& [k, x] : v) r.metrics[k] = {std::to_string(x), "", "", x};
  return r;
}

DevicePeaks Peaks() {
  DevicePeaks p;
  p.dram_bytes_per_s = 3e12;
  p.matmul_flops_per_s = {{"float32", 50e12}, {"bfloat16", 750e12}};
  return p;
}

TEST(Roofline, MemoryOnlyKernel) {
  auto p = Peaks();
  auto r = ComputeRoofline(
      Row({{"gpu__time_duration.sum", 1e-3}, {"dram__bytes_read.sum", 2e9}, {"dram__bytes_write.sum", 1e9}}), &p);
  EXPECT_NEAR(r.dram_bytes_per_s, 3e12, 1);
  EXPECT_NEAR(r.memory_fraction, 1.0, 1e-12);
  EXPECT_EQ(r.bound_by, "memory");
  EXPECT_NEAR(r.fraction_of_roof, 1.0, 1e-12);
  EXPECT_TRUE(r.dtypes.empty());
}

TEST(Roofline, ComputeAndMemorySides) {
  auto p = Peaks();
  // bf16 tensor: 5e11 FLOP in 1 ms = 500 TFLOP/s; 1e9 bytes: AI 500 > ridge 250 -> compute side.
  auto r = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3},
                                {"dram__bytes_read.sum", 1e9},
                                {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 5e11},
                                {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e9}}),
                           &p);
  ASSERT_EQ(r.dtypes.size(), 2u);
  EXPECT_EQ(r.main()->dtype, "bfloat16");
  EXPECT_NEAR(r.main()->ai, 500, 1e-9);
  EXPECT_NEAR(r.main()->attainable_flops_per_s, 750e12, 1);
  EXPECT_NEAR(r.fraction_of_roof, 500.0 / 750.0, 1e-12);
  EXPECT_EQ(r.bound_by, "compute");
  EXPECT_NEAR(r.dtypes[1].flops, 2e9, 1);  // FFMA counts 2
  // Same FLOPs over 1e10 bytes: AI 50 < ridge 250 -> memory side; attainable = AI * bw.
  auto m = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-2},
                                {"dram__bytes_read.sum", 1e10},
                                {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 5e11}}),
                           &p);
  EXPECT_EQ(m.bound_by, "memory");
  EXPECT_NEAR(m.main()->attainable_flops_per_s, 50 * 3e12, 1);
  EXPECT_NEAR(m.fraction_of_roof, (5e11 / 1e-2) / (150e12), 1e-12);
  EXPECT_NEAR(m.fraction_of_roof, m.memory_fraction, 1e-12);  // on the memory slope they agree
}

// fp16 and fp8 tensor work: the counter without a destination type (Hopper's ncu) wins over the split ones, which
// count the same operations where a chip's ncu has both (never twice); the split ones alone still count. int8
// tensor work counts as its own dtype.
TEST(Roofline, TensorCountersWithoutDestinationTypeAreNotCountedTwice) {
  auto p = Peaks();
  p.matmul_flops_per_s["float16"] = 750e12;
  auto both = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3},
                                   {"sm__ops_path_tensor_src_fp16.sum", 5e11},
                                   {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 5e11}}),
                              &p);
  ASSERT_EQ(both.dtypes.size(), 1u);
  EXPECT_EQ(both.main()->dtype, "float16");
  EXPECT_NEAR(both.main()->flops, 5e11, 1);
  EXPECT_NEAR(both.fraction_of_roof, 500.0 / 750.0, 1e-12);
  auto split = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3},
                                    {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 1e11},
                                    {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 4e11}}),
                               &p);
  ASSERT_EQ(split.dtypes.size(), 1u);
  EXPECT_NEAR(split.main()->flops, 5e11, 1);
  auto fp8 = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3},
                                  {"sm__ops_path_tensor_src_fp8.sum", 3e11},
                                  {"sm__ops_path_tensor_src_fp8_dst_fp32.sum", 3e11},
                                  {"sm__ops_path_tensor_src_int8.sum", 1e11}}),
                             &p);
  ASSERT_EQ(fp8.dtypes.size(), 2u);
  EXPECT_EQ(fp8.main()->dtype, "float8_e4m3fn");
  EXPECT_NEAR(fp8.main()->flops, 3e11, 1);
  EXPECT_EQ(fp8.dtypes[1].dtype, "int8");
  EXPECT_TRUE(fp8.dtypes[1].tensor);
}

TEST(Roofline, NoPeaksNoFractions) {
  auto r = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3}, {"dram__bytes_read.sum", 1e9}}), nullptr);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.bound_by, "");
  EXPECT_EQ(r.fraction_of_roof, 0);
}

TEST(Roofline, Fp32LanesByComputeCapability) {
  EXPECT_EQ(Fp32LanesPerSm("7.0"), 64);
  EXPECT_EQ(Fp32LanesPerSm("8.0"), 64);
  EXPECT_EQ(Fp32LanesPerSm("8.6"), 128);
  EXPECT_EQ(Fp32LanesPerSm("8.9"), 128);
  EXPECT_EQ(Fp32LanesPerSm("9.0"), 128);
  EXPECT_EQ(Fp32LanesPerSm("12.0"), 128);
  EXPECT_EQ(Fp32LanesPerSm(""), 0);
  EXPECT_EQ(Fp32LanesPerSm("6.1"), 0);
}

// The H200 recording of an FMA chain (tests/profile/data/partial_wave.csv): 2.54e9 FFMA in
// 103.1 us at 1.97 GHz on 132 SMs = 49.3 TFLOP/s. The measured sgemm (51.2 TFLOP/s) is below the
// FP32 pipe (132 x 128 x 2 x 1.97 GHz = 66.6 TFLOP/s): the pipe is the roof, 74% (SM SOL 75%),
// not 96% of the sgemm rate.
TEST(Roofline, CudaCoreFp32RoofIsThePipeWhenAboveTheMeasuredMatmul) {
  DevicePeaks p;
  p.dram_bytes_per_s = 4.25e12;
  p.matmul_flops_per_s = {{"float32", 51.24e12}, {"bfloat16", 776e12}};
  auto row = Row({{"gpu__time_duration.sum", 103.104e-6},
                  {"dram__bytes_read.sum", 1249536},
                  {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2541748224},
                  {"device__attribute_multiprocessor_count", 132},
                  {"sm__cycles_elapsed.avg.per_second", 1.96992e9}});
  row.cc = "9.0";
  EXPECT_NEAR(Fp32PipePeakFlops(row), 132 * 128 * 2 * 1.96992e9, 1);
  auto r = ComputeRoofline(row, &p);
  ASSERT_NE(r.main(), nullptr);
  EXPECT_EQ(r.main()->peak_source, "fp32_pipe");
  EXPECT_EQ(r.bound_by, "compute");
  EXPECT_NEAR(r.fraction_of_roof, 0.741, 0.002);
  EXPECT_FALSE(r.above_measured_roof);
  // Without the compute capability (or clock) the pipe is unknown: the measured sgemm stays the roof.
  row.cc = "";
  auto old = ComputeRoofline(row, &p);
  EXPECT_EQ(old.main()->peak_source, "measured");
  EXPECT_NEAR(old.fraction_of_roof, 0.962, 0.002);
  // On a pre-Ampere-consumer part (64 lanes) the pipe (33 TFLOP/s) is below the measured 51: the
  // measured roof stays, capped at 1.
  row.cc = "8.0";
  auto a100 = ComputeRoofline(row, &p);
  EXPECT_EQ(a100.main()->peak_source, "measured");
  // Tensor dtypes keep their measured (cuBLAS) roofs.
  auto t = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3},
                                {"dram__bytes_read.sum", 1e9},
                                {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 5e11},
                                {"sm__cycles_elapsed.avg.per_second", 1.9e9},
                                {"device__attribute_multiprocessor_count", 132}}),
                           &p);
  EXPECT_EQ(t.main()->peak_source, "measured");
}

// The H200 recording of vec_add: 1.59 GB in 367 us = 4.33 TB/s, above the measured D2D copy
// (4.25 TB/s). The roof fraction is capped at 1 and the uncapped value kept.
TEST(Roofline, FractionAboveTheMeasuredRoofIsCapped) {
  DevicePeaks p;
  p.dram_bytes_per_s = 4.246e12;
  auto r = ComputeRoofline(Row({{"gpu__time_duration.sum", 367.328e-6},
                                {"dram__bytes_read.sum", 1073753088},
                                {"dram__bytes_write.sum", 518304512}}),
                           &p);
  EXPECT_EQ(r.bound_by, "memory");
  EXPECT_DOUBLE_EQ(r.fraction_of_roof, 1.0);
  EXPECT_NEAR(r.fraction_of_roof_measured, 1.021, 0.002);
  EXPECT_NEAR(r.memory_fraction, 1.021, 0.002);  // the plain ratio stays uncapped
  EXPECT_TRUE(r.above_measured_roof);
  auto j = ToJson(r);
  EXPECT_TRUE(j["above_measured_roof"].get<bool>());
  // Just under the roof: not capped, not flagged.
  auto u = ComputeRoofline(Row({{"gpu__time_duration.sum", 1e-3}, {"dram__bytes_read.sum", 4.2e9}}), &p);
  EXPECT_FALSE(u.above_measured_roof);
  EXPECT_NEAR(u.fraction_of_roof, 4.2e12 / 4.246e12, 1e-12);
}

TEST(Peaks, DerivedDtypes) {
  auto p = Peaks();
  EXPECT_DOUBLE_EQ(p.FlopsFor("float64"), 25e12);
  EXPECT_DOUBLE_EQ(p.FlopsFor("float16_cuda"), 100e12);
  EXPECT_DOUBLE_EQ(p.FlopsFor("tf32"), 0);
}

}  // namespace
}  // namespace kiln::profile
