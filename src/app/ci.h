// kiln/app: `kiln ci`, the performance-regression gate.
//
// A baseline file (JSON, schema_version 1) holds per task and input case the median time measured on
// one GPU model, with the spread and the versions. RunCi re-measures every task (its own code, or a
// given candidate), compares each case with the baseline and flags a regression when the new median
// is more than `threshold_pct` slower; a flagged task is measured again (longer timing, other
// inputs) and the regression stands only when the re-measurement confirms it (the better of the two
// medians is kept). A baseline from another GPU model is refused (exit 2) unless allowed, then it is
// a warning. Exit codes: 0 pass, 1 regression or a failing task, 2 refused / unusable baseline.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "search/interfaces.h"
#include "task/task.h"

namespace kiln::app {

struct CiTask {
  task::TaskSpec spec;
  std::optional<std::string> source;  // nullopt: the task's own code
};

struct BaselineCase {
  double median_ms = 0, p20_ms = 0, p80_ms = 0;
};

struct BaselineTask {
  std::string hash;
  std::map<std::string, BaselineCase> cases;
};

struct Baseline {
  std::string gpu_name, gpu_uuid;
  nlohmann::json versions = nlohmann::json::object();
  std::string created_at;
  std::map<std::string, BaselineTask> tasks;  // by task name

  nlohmann::json ToJson() const;
  static Result<Baseline> FromJson(const nlohmann::json& j);
  static Result<Baseline> Load(const std::string& path);
  Status Save(const std::string& path) const;
};

struct CiOptions {
  double threshold_pct = 5;          // --threshold
  bool remeasure = true;             // --no-remeasure turns it off
  bool update_baseline = false;      // --update-baseline
  bool allow_different_gpu = false;  // --allow-different-gpu (warn instead of refusing)
  int trials = 3;
  uint64_t seed = 4242;
  double timeout_s = 300;
  nlohmann::json timing = {{"warmup_ms", 25}, {"rep_ms", 100}, {"rounds", 3}, {"time_reference", false}};
  nlohmann::json remeasure_timing = {{"warmup_ms", 50}, {"rep_ms", 300}, {"rounds", 5}, {"time_reference", false}};
};

struct CiRow {
  std::string task, case_name;
  std::string status;  // "pass", "regression", "improved", "new", "failed", "missing", "recorded"
  double baseline_ms = 0, new_ms = 0, remeasured_ms = 0;
  double ratio = 0;  // new / baseline (after re-measurement)
  std::string message;
  double time_s = 0;  // wall time of the task's measurements
};

struct CiReport {
  std::vector<CiRow> rows;
  std::string gpu_name, baseline_gpu;
  bool gpu_mismatch = false;
  std::vector<std::string> warnings;
  int regressions = 0, failures = 0;
  int exit_code = 0;
  Baseline updated;  // with --update-baseline: what to write
  double wall_s = 0;
};

// `baseline` may be null only with update_baseline. Errors: no GPU, no baseline, or a machinery
// failure of `ev` (never a task's "failed" row).
Result<CiReport> RunCi(const std::vector<CiTask>& tasks, search::Measurer& ev, const Baseline* baseline,
                       const CiOptions& o);

std::string FormatCiTable(const CiReport& r);
// JUnit XML: one <testsuite name="kiln-ci">, one <testcase classname="kiln.ci.<task>" name="<case>">
// per row, <failure> for regressions and failures, <skipped> for new/missing.
std::string JUnitXml(const CiReport& r);
std::string XmlEscape(const std::string& s);

}  // namespace kiln::app
