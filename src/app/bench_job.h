// kiln/app: `kiln bench`: a benchmark channel (TritonBench-G, TritonBench-T, KernelBench level 1-3) over a
// set of model samples, evaluated through the batch pipeline of `kiln eval --batch`, reported with the
// metrics of src/bench (docs/bench.md).
//
// Exit codes: 0 every sample got an outcome (correct, wrong, hacked, failed, no code) and the reports were
// written; 1 the reports were written but kiln could not evaluate some samples (task errors, machinery
// failures: outcome "error"); 2 usage or infrastructure error (bad flags, missing dataset, unknown task,
// unreadable samples, no worker).
#pragma once

#include <string>
#include <vector>

#include "app/eval_job.h"

namespace kiln::app {

struct BenchOptions {
  std::string channel;  // tritonbench-g | tritonbench-t | kernelbench
  int level = 0;        // kernelbench: 1, 2 or 3
  std::string samples;  // JSON lines or a KernelBench generation folder
  std::string dataset;  // the TritonBench / KernelBench checkout
  std::string out = "bench-out";
  bool gold = false;               // the channel's own reference as the samples (a sanity channel)
  std::vector<std::string> tasks;  // only these tasks (names as the dataset's file stems)
  std::vector<int> ks = {1, 5, 10};
  std::string label;         // the model's row in the table (default: the samples' file name, or "gold")
  bool json = false;         // print summary.json instead of the table
  bool report_only = false;  // no evaluation: report what out/results.jsonl holds (missing: outcome error)
  // KernelBench's references: "eager" (every sample's speedup, the default), "compile" or "both" (also the
  // speedups over torch.compile(reference), measured on the same GPU: one extra pair per task; src/bench/baseline.h)
  std::string baseline = "eager";
  std::string baseline_file;  // KernelBench's baseline JSON of torch.compile times, instead of measuring
  // The evaluation: mode (default time), protocol, timeout, sizes, worker, records, workers, GPUs, quiet,
  // no_cache; batch/out/resume are set by the bench.
  EvalOptions eval;
};

int RunBench(const BenchOptions& o);

}  // namespace kiln::app
