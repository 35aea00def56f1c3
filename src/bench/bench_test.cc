// Samples, datasets and reports of `kiln bench` (the metrics: metrics_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench/baseline.h"
#include "bench/dataset.h"
#include "bench/report.h"
#include "bench/samples.h"
#include "common/file.h"

namespace kiln::bench {
namespace {

namespace fs = std::filesystem;

TEST(Samples, JsonLinesWithResponsesCodeAndRanks) {
  const std::string text =
      "{\"task\": \"add\", \"response\": \"Sure:\\n```python\\nimport triton\\nx = 1\\n```\\n\"}\n"
      "\n"
      "{\"task\": \"add\", \"code\": \"import torch\\n\", \"sizes\": {\"N\": 4}}\n"
      "{\"task\": \"mul\", \"sample\": 7, \"response\": \"I cannot do that.\"}\n";
  auto s = ParseSampleLines("s.jsonl", text);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].sample, "0");
  EXPECT_TRUE((*s)[0].has_code);
  EXPECT_EQ((*s)[0].code, "import triton\nx = 1\n");
  EXPECT_EQ((*s)[0].how, "fenced");
  EXPECT_EQ((*s)[1].sample, "1");
  EXPECT_EQ((*s)[1].how, "code");
  EXPECT_EQ((*s)[1].sizes["N"], 4);
  EXPECT_EQ((*s)[1].origin, "s.jsonl:3");
  EXPECT_EQ((*s)[2].sample, "7");
  EXPECT_FALSE((*s)[2].has_code);  // a sample without code, not an error
}

TEST(Samples, BadLinesAreErrorsNamingTheLine) {
  auto bad = ParseSampleLines("s.jsonl", "{\"task\": \"a\", \"code\": \"x\"}\nnot json\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "s.jsonl:2:1: error: not a JSON object");
  auto notask = ParseSampleLines("s.jsonl", "{\"code\": \"x\"}\n");
  EXPECT_NE(notask.status().message().find("s.jsonl:1:1: error: key 'task'"), std::string::npos);
  auto twice = ParseSampleLines("s.jsonl", "{\"task\": \"a\", \"sample\": 1}\n{\"task\": \"a\", \"sample\": \"1\"}\n");
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos);
  // '@' names kiln's own pairs (the torch.compile baseline's "<task>#@compile")
  auto at = ParseSampleLines("s.jsonl", "{\"task\": \"19\", \"sample\": \"@compile\", \"code\": \"x\"}\n");
  EXPECT_EQ(at.status().message(), "s.jsonl:1:1: error: key 'sample': '@compile': a sample name cannot start with '@'");
  auto missing = ReadSamples("/nonexistent/samples.jsonl", 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/samples.jsonl"), std::string::npos);
}

TEST(Samples, KernelBenchGenerationFolder) {
  fs::path d = fs::temp_directory_path() / ("kiln_bench_gen_" + std::to_string(::getpid()));
  fs::create_directories(d);
  std::ofstream(d / "level_1_problem_19_sample_0_kernel.py") << "class ModelNew: pass\n";
  std::ofstream(d / "level_1_problem_19_sample_1_kernel.py") << "\n";
  std::ofstream(d / "level_2_problem_3_sample_0_kernel.py") << "class ModelNew: pass\n";
  std::ofstream(d / "notes.txt") << "ignored\n";
  // numbers past int64 in a name: not a sample (std::stoi threw out_of_range and ended kiln bench)
  std::ofstream(d / "level_99999999999999999999_problem_1_sample_0_kernel.py") << "class ModelNew: pass\n";
  std::ofstream(d / "level_1_problem_99999999999999999999_sample_0_kernel.py") << "class ModelNew: pass\n";
  auto s = ReadSamples(d.string(), 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].task, "19");
  EXPECT_EQ((*s)[0].sample, "0");
  EXPECT_TRUE((*s)[0].has_code);
  EXPECT_FALSE((*s)[1].has_code);
  EXPECT_FALSE(ReadSamples(d.string(), 3).ok());  // no samples of level 3: an error naming the layout
  EXPECT_FALSE(ReadSamples(d.string(), 0).ok());  // a folder needs --level
  fs::remove_all(d);
}

TEST(Dataset, ChannelsAndTheCorpusLayouts) {
  EXPECT_FALSE(ParseChannel("kernelbench", 0).ok());
  EXPECT_FALSE(ParseChannel("tritonbench-g", 1).ok());
  EXPECT_FALSE(ParseChannel("kernelbench-x", 0).ok());
  EXPECT_EQ(ParseChannel("kernelbench", 2)->Name(), "kernelbench-level2");
  auto none = TaskDir(*ParseChannel("tritonbench-t", 0), "");
  EXPECT_NE(none.status().message().find("--dataset"), std::string::npos);
  const std::string corpus = KILN_CORPUS_DIR;
  if (!fs::exists(corpus)) GTEST_SKIP() << "no corpus";
  Channel g = *ParseChannel("tritonbench-g", 0), kb = *ParseChannel("kernelbench", 1);
  auto gdir = TaskDir(g, corpus + "/tritonbench");
  ASSERT_TRUE(gdir.ok()) << gdir.status().message();
  EXPECT_TRUE(ResolveTask(g, *gdir, "add_example").ok());
  EXPECT_TRUE(ResolveTask(g, *gdir, "add_example.py").ok());
  auto missing = ResolveTask(g, *gdir, "no_such_kernel");
  EXPECT_NE(missing.status().message().find("task 'no_such_kernel' not found"), std::string::npos);
  EXPECT_FALSE(ResolveTask(g, *gdir, "../T/kernels/abs").ok());
  auto kdir = TaskDir(kb, corpus + "/kernelbench");
  ASSERT_TRUE(kdir.ok());
  auto relu = ResolveTask(kb, *kdir, "19");
  ASSERT_TRUE(relu.ok());
  EXPECT_EQ(fs::path(*relu).stem(), "19_ReLU");
  EXPECT_EQ(ListTasks(g, *gdir).size(), 123u);
  EXPECT_FALSE(TaskDir(kb, corpus + "/tritonbench").ok());
}

TEST(Report, FilesAndSchema) {
  Report r;
  r.channel = *ParseChannel("kernelbench", 1);
  r.label = "model-x";
  r.mode = "time";
  r.protocol = "kernelbench";
  r.device = "test";
  r.ks = {1, 2};
  r.ps = {0, 1};
  r.samples = {{"19_ReLU", "0", Outcome::kCorrect, "ok", {}, 2.0},
               {"19_ReLU", "1", Outcome::kHacked, "rejected", {"torch_compute"}, std::nullopt},
               {"20,x", "0", Outcome::kNoCode, "no_code", {}, std::nullopt}};
  Compute(&r);
  auto j = SummaryJson(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_DOUBLE_EQ(j["exec_acc"].get<double>(), 0.25);  // (1/2 + 0) / 2
  EXPECT_DOUBLE_EQ(j["fast_p"]["1"].get<double>(), 0.25);
  EXPECT_TRUE(j["legacy_exec_acc"].is_null());
  EXPECT_TRUE(j["wall_s"].is_null());  // not set: a report without an evaluation
  EXPECT_NE(SummaryMarkdown(r).find("wall n/a (report only)"), std::string::npos);
  EXPECT_EQ(j["outcomes"]["hacked"], 1);
  EXPECT_EQ(j["reasons"]["hacked"]["torch_compute"], 1);
  EXPECT_EQ(j["pass_at_k"]["2"]["tasks"], 1);
  std::string csv = TasksCsv(r);
  EXPECT_NE(csv.find("\"20,x\",1,0,0,0,0,0,1,0,"), std::string::npos) << csv;
  std::string md = SummaryMarkdown(r);
  // call (1/2 + 0) / 2; pass@2 only over the task with 2 samples (n >= k)
  EXPECT_NE(md.find("| model-x | 25.0 | 25.0 | 2.00x | 25.0 | 25.0 | 25.0 | 100.0 (1/2 tasks) |"), std::string::npos)
      << md;
  std::string html = Html(r);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  fs::path d = fs::temp_directory_path() / ("kiln_bench_report_" + std::to_string(::getpid()));
  ASSERT_TRUE(WriteReports(r, d.string()).ok());
  for (const char* f : {"summary.json", "summary.md", "tasks.jsonl", "tasks.csv", "report.html"})
    EXPECT_TRUE(fs::exists(d / f)) << f;
  fs::remove_all(d);
}

// TritonBench's legacy stdout exec accuracy: per task legacy_passed / n, averaged; a sample that did not go
// through the check (no code, a static rejection) counts as failing it; a correct sample can fail it (it
// prints differently) and a wrong one pass it (its gold prints nothing).
TEST(Report, LegacyStdoutExecAccuracy) {
  Report r;
  r.channel = *ParseChannel("tritonbench-g", 0);
  r.label = "m";
  r.ks = {1};
  r.ps = {0};
  SampleOutcome a{"add", "0", Outcome::kCorrect, "ok", {}, std::nullopt};
  a.legacy_pass = false;  // correct, prints a line of its own
  SampleOutcome b{"add", "1", Outcome::kWrong, "mismatch", {}, std::nullopt};
  b.legacy_pass = true;  // wrong, prints nothing like its gold
  SampleOutcome c{"mul", "0", Outcome::kCorrect, "ok", {}, std::nullopt};
  c.legacy_pass = true;
  SampleOutcome d{"mul", "1", Outcome::kNoCode, "no_code", {}, std::nullopt};  // not run
  r.samples = {a, b, c, d};
  Compute(&r);
  auto j = SummaryJson(r);
  EXPECT_DOUBLE_EQ(j["legacy_exec_acc"].get<double>(), 0.5);  // (1/2 + 1/2) / 2
  EXPECT_DOUBLE_EQ(j["exec_acc"].get<double>(), 0.5);
  EXPECT_NE(j["legacy_exec_acc_note"].get<std::string>().find("3 of 4 samples"), std::string::npos);
  EXPECT_NE(SummaryMarkdown(r).find("legacy stdout exec accuracy (its own check: the same stdout as the gold "
                                    "file): 50.0% (3 of 4 samples"),
            std::string::npos)
      << SummaryMarkdown(r);
  EXPECT_NE(TasksCsv(r).find("add,2,2,1,1,0,0,0,0,1.0000,0.5000,,0.5000\n"), std::string::npos) << TasksCsv(r);
  r.samples = {{"add", "0", Outcome::kCorrect, "ok", {}, std::nullopt}};  // results without the check
  Compute(&r);
  EXPECT_TRUE(SummaryJson(r)["legacy_exec_acc"].is_null());
}

// torch.compile baseline: the samples' speedups over it give a second set of speedup metrics beside eager.
TEST(Report, VsCompile) {
  Report r;
  r.channel = *ParseChannel("kernelbench", 1);
  r.label = "m";
  r.ks = {1};
  r.ps = {0, 1};
  SampleOutcome a{"19_ReLU", "0", Outcome::kCorrect, "ok", {}, 2.0};
  a.speedup_compile = SpeedupVsCompile(a.speedup, 4.0);  // compile is 4x faster than eager: 0.5x over compile
  SampleOutcome b{"20_LeakyReLU", "0", Outcome::kCorrect, "ok", {}, 1.5};  // its task has no compile time
  r.samples = {a, b};
  Compute(&r);
  EXPECT_TRUE(SummaryJson(r)["vs_compile"].is_null());  // not asked for
  r.compile_source = "measured";
  r.compile_tasks = 1;
  r.compile_note = "1 task(s) without one: no result";
  Compute(&r);
  auto j = SummaryJson(r);
  EXPECT_DOUBLE_EQ(j["geomean_speedup"].get<double>(), std::sqrt(3.0));  // eager: (2 * 1.5)^(1/2)
  EXPECT_DOUBLE_EQ(j["vs_compile"]["geomean_speedup"].get<double>(), 0.5);
  EXPECT_EQ(j["vs_compile"]["tasks_with_speedup"], 1);
  EXPECT_DOUBLE_EQ(j["vs_compile"]["fast_p"]["1"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["fast_p"]["1"].get<double>(), 1.0);
  std::string md = SummaryMarkdown(r);
  EXPECT_NE(md.find("| m vs torch.compile | 100.0 | 100.0 | 0.50x | 100.0 | 0.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("torch.compile baseline (measured): 1 of 2 tasks have a time; 1 task(s) without one"),
            std::string::npos)
      << md;
  EXPECT_NE(TasksJsonl(r).find("\"speedup_vs_compile\":0.5"), std::string::npos) << TasksJsonl(r);
}

TEST(Baseline, KernelBenchFileAndSpeedup) {
  fs::path d = fs::temp_directory_path() / ("kiln_bench_baseline_" + std::to_string(::getpid()));
  fs::create_directories(d);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(d / name) << text;
    return (d / name).string();
  };
  auto good = write("good.json",
                    R"({"level1": {"19_ReLU.py": {"mean": 4.31, "std": 0.005, "num_trials": 100,
                        "hardware": "NVIDIA H100 80GB HBM3"}}, "level2": {}})");
  auto f = ReadBaselineFile(good, 1);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_DOUBLE_EQ(f->at("19_ReLU"), 4.31);
  auto no_level = ReadBaselineFile(good, 3);
  EXPECT_NE(no_level.status().message().find("good.json: error: no \"level3\" object"), std::string::npos);
  auto bad = ReadBaselineFile(write("bad.json", R"({"level1": {"19_ReLU.py": {"mean": "fast"}}})"), 1);
  EXPECT_NE(bad.status().message().find("level1.19_ReLU.py: expected"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ReadBaselineFile(write("nojson.json", "[1, 2"), 1).ok());
  EXPECT_FALSE(ReadBaselineFile((d / "missing.json").string(), 1).ok());
  fs::remove_all(d);
  EXPECT_DOUBLE_EQ(*SpeedupVsCompile(3.0, 1.5), 2.0);
  EXPECT_FALSE(SpeedupVsCompile(std::nullopt, 1.5).has_value());
  EXPECT_FALSE(SpeedupVsCompile(3.0, std::nullopt).has_value());
  std::string src = CompileBaselineSource("class Model:\n    pass\n");
  EXPECT_NE(src.find("class ModelNew(Model):"), std::string::npos);
  EXPECT_NE(src.find("torch.compile(super().forward)"), std::string::npos);
  EXPECT_NE(src.find("_disable_current_modes"), std::string::npos);  // dynamo runs eagerly under a dispatch mode
  EXPECT_EQ(CompileBaselineId("19_ReLU"), "19_ReLU#@compile");
}

}  // namespace
}  // namespace kiln::bench
