// kiln/bench: the reports of `kiln bench` (docs/bench.md, "Reports"): summary.json (schema_version 1),
// summary.md (the AutoTriton-style table), tasks.jsonl and tasks.csv (one row per task), report.html
// (self-contained: inline SVG, no script, no external style).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/dataset.h"
#include "bench/metrics.h"
#include "common/status.h"

namespace kiln::bench {

inline constexpr int kSummarySchemaVersion = 1;

struct Report {
  Channel channel;
  std::string label;     // the model's row in the table (default: the samples' file name)
  std::string mode;      // check or time
  std::string protocol;  // tolerance protocol
  bool gold = false;
  std::string device;            // the GPUs' names, or "interpreter"
  std::optional<double> wall_s;  // of the evaluation; none for --report-only
  std::vector<int> ks;
  std::vector<double> ps;
  std::vector<SampleOutcome> samples;
  std::vector<TaskMetrics> tasks;
  ChannelMetrics metrics;
  // KernelBench's torch.compile baseline (--baseline compile|both, --baseline-file): the speedup metrics over
  // it, from each sample's speedup_compile; `compile_source` empty: not asked for (summary.json vs_compile
  // null).
  std::string compile_source;  // "measured" or "file <path>"
  int compile_tasks = 0;       // tasks with a torch.compile time
  std::string compile_note;    // why some or all tasks have none (the interpreter, a failed compile, ...)
  std::vector<TaskMetrics> tasks_vs_compile;
  ChannelMetrics vs_compile;
};

// Builds tasks and metrics from samples (every task named by a sample, sorted).
void Compute(Report* r);

nlohmann::json SummaryJson(const Report& r);
std::string SummaryMarkdown(const Report& r);
std::string TasksJsonl(const Report& r);
std::string TasksCsv(const Report& r);
std::string Html(const Report& r);
// "wall 12.3 s", or "wall n/a (report only)".
std::string WallText(const Report& r);

// Writes every report into `dir` (created).
Status WriteReports(const Report& r, const std::string& dir);

// "0.5" for 0.5, "1.2", "2": a p or k as a key.
std::string NumberKey(double p);

}  // namespace kiln::bench
