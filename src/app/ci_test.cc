// `kiln ci` logic: regression detection, threshold, re-measurement, different-GPU refusal,
// baseline round trip and JUnit XML validity.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "app/ci.h"
#include "fakes.h"

namespace kiln::app {

using search::Config;
namespace {

// Times per task name; `slow_once` makes the first measurement of a task slower (noise).
class CiEvaluator : public search::testing::FakeMeasurer {
 public:
  std::map<std::string, double> ms;
  std::map<std::string, int> seen;
  std::map<std::string, double> first_factor;
  exec::EvalResult Run(const exec::EvalRequest& r) override {
    int n = seen[r.task.name]++;
    double f = (n == 0 && first_factor.count(r.task.name)) ? first_factor[r.task.name] : 1.0;
    double t = ms[r.task.name] * f;
    time_ms = [t](const Config&, bool) { return t; };
    return FakeMeasurer::Run(r);
  }
};

CiTask Task(const std::string& name) {
  CiTask t;
  t.spec.name = name;
  t.spec.hash = "h-" + name;
  return t;
}

Baseline MakeBaseline(const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  Baseline b;
  b.gpu_name = gpu;
  for (const char* n : {"a", "b"}) {
    BaselineTask t;
    t.cases["small"] = {1.0, 0.99, 1.01};
    t.cases["large"] = {4.0, 3.96, 4.04};
    b.tasks[n] = t;
  }
  return b;
}

TEST(Ci, PassesWithinThreshold) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.03}, {"b", 0.98}};
  Baseline b = MakeBaseline();
  auto r = RunCi({Task("a"), Task("b")}, ev, &b, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->regressions, 0);
  EXPECT_EQ(r->rows.size(), 4u);
}

TEST(Ci, DetectsConfirmedRegression) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.10}, {"b", 1.0}};
  Baseline b = MakeBaseline();
  auto r = RunCi({Task("a"), Task("b")}, ev, &b, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(r->regressions, 2);  // both cases of "a"
  EXPECT_EQ(ev.seen["a"], 2);    // re-measured before failing
  EXPECT_EQ(ev.seen["b"], 1);
  for (auto& row : r->rows)
    if (row.task == "a") {
      EXPECT_EQ(row.status, "regression");
      EXPECT_NEAR(row.ratio, 1.10, 1e-9);
      EXPECT_NE(row.message.find("confirmed"), std::string::npos);
    }
}

TEST(Ci, ThresholdIsRespected) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.10}, {"b", 1.0}};
  Baseline b = MakeBaseline();
  CiOptions o;
  o.threshold_pct = 15;
  auto r = RunCi({Task("a"), Task("b")}, ev, &b, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(ev.seen["a"], 1);  // nothing flagged, nothing re-measured
}

TEST(Ci, NoiseNotConfirmedOnReMeasurement) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.0}, {"b", 1.0}};
  ev.first_factor = {{"a", 1.3}};  // first measurement 30% slow, then normal
  Baseline b = MakeBaseline();
  auto r = RunCi({Task("a"), Task("b")}, ev, &b, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(ev.seen["a"], 2);
  for (auto& row : r->rows)
    if (row.task == "a") {
      EXPECT_NE(row.message.find("not confirmed"), std::string::npos);
    }
  // Without re-measurement the same noise fails the gate.
  CiEvaluator ev2;
  ev2.ms = ev.ms;
  ev2.first_factor = ev.first_factor;
  CiOptions o;
  o.remeasure = false;
  auto r2 = RunCi({Task("a"), Task("b")}, ev2, &b, o);
  EXPECT_EQ(r2->exit_code, 1);
}

TEST(Ci, RefusesBaselineFromAnotherGpu) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.0}, {"b", 1.0}};
  Baseline b = MakeBaseline("NVIDIA H200");
  auto r = RunCi({Task("a")}, ev, &b, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_TRUE(r->gpu_mismatch);
  EXPECT_EQ(ev.seen["a"], 0);  // nothing measured
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find("H200"), std::string::npos);
  CiOptions o;
  o.allow_different_gpu = true;
  auto r2 = RunCi({Task("a")}, ev, &b, o);
  EXPECT_EQ(r2->exit_code, 0);
  EXPECT_FALSE(r2->warnings.empty());
}

TEST(Ci, UpdateBaselineRoundTrip) {
  CiEvaluator ev;
  ev.ms = {{"a", 0.5}};
  CiOptions o;
  o.update_baseline = true;
  auto r = RunCi({Task("a")}, ev, nullptr, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  auto path =
      (std::filesystem::temp_directory_path() / ("kiln_ci_base_" + std::to_string(::getpid()) + ".json")).string();
  ASSERT_TRUE(r->updated.Save(path).ok());
  auto b = Baseline::Load(path);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(b->tasks.at("a").cases.at("large").median_ms, 2.0);
  // And it gates the next run.
  CiEvaluator ev2;
  ev2.ms = {{"a", 0.6}};
  auto r2 = RunCi({Task("a")}, ev2, &*b, {});
  EXPECT_EQ(r2->exit_code, 1);
  std::filesystem::remove(path);
  EXPECT_FALSE(RunCi({Task("a")}, ev, nullptr, {}).ok());  // no baseline, no update: an error
  EXPECT_FALSE(Baseline::FromJson({{"kind", "other"}}).ok());
}

TEST(Ci, FailingTaskFailsTheGate) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.0}};
  ev.wrong = [](const Config&, int) { return true; };
  Baseline b = MakeBaseline();
  auto r = RunCi({Task("a")}, ev, &b, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(r->failures, 1);
}

TEST(Ci, JUnitXmlIsWellFormed) {
  CiEvaluator ev;
  ev.ms = {{"a", 1.2}, {"b<&>\"'", 1.0}};
  Baseline b = MakeBaseline();
  auto r = RunCi({Task("a"), Task("b<&>\"'")}, ev, &b, {});
  ASSERT_TRUE(r.ok());
  std::string x = JUnitXml(*r);
  EXPECT_NE(x.find("<failure type=\"regression\""), std::string::npos);
  EXPECT_NE(x.find("b&lt;&amp;&gt;&quot;&apos;"), std::string::npos);
  EXPECT_NE(x.find("<skipped"), std::string::npos);  // the new task
  // Balanced elements (a cheap structural check) ...
  int open = 0;
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    if (x[i] != '<' || x[i + 1] == '?') continue;
    size_t end = x.find('>', i);
    ASSERT_NE(end, std::string::npos);
    if (x[i + 1] == '/')
      --open;
    else if (x[end - 1] != '/')
      ++open;
    ASSERT_GE(open, 0);
  }
  EXPECT_EQ(open, 0);
  // ... and a real XML parser when python3 is around.
  auto path =
      (std::filesystem::temp_directory_path() / ("kiln_ci_junit_" + std::to_string(::getpid()) + ".xml")).string();
  std::ofstream(path) << x;
  if (std::system("python3 -c 'import sys' >/dev/null 2>&1") == 0) {
    std::string cmd =
        "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
        "s = r.find('testsuite'); assert r.tag == 'testsuites' and int(s.get('failures')) == 2, "
        "s.attrib\" " +
        path;
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  std::filesystem::remove(path);
  EXPECT_NE(FormatCiTable(*r).find("regression"), std::string::npos);
}

}  // namespace
}  // namespace kiln::app
