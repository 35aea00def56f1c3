// kiln/bench: the channels of `kiln bench` and where their tasks live in a dataset checkout
// (docs/bench.md, "Datasets").
//
//   tritonbench-g  <dataset>/G/kernels/<task>.py, <dataset>/data/TritonBench_G_v1/<task>.py, or
//                  <dataset>/<task>.py (the corpus layout, TritonBench's own, or the folder itself)
//   tritonbench-t  the same with T / TritonBench_T_v1
//   kernelbench    <dataset>/level<L>/<task>.py or <dataset>/KernelBench/level<L>/<task>.py; a task is
//                  named by its file stem ("19_ReLU") or its problem number ("19")
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::bench {

enum class Benchmark { kTritonBenchG, kTritonBenchT, kKernelBench };

struct Channel {
  Benchmark benchmark = Benchmark::kTritonBenchG;
  int level = 0;             // KernelBench: 1, 2 or 3
  std::string Name() const;  // "tritonbench-g", "tritonbench-t", "kernelbench-level1"
  bool IsTritonBench() const { return benchmark != Benchmark::kKernelBench; }
};

// "tritonbench-g" | "tritonbench-t" | "kernelbench" (with level 1..3; level must be 0 for TritonBench).
Result<Channel> ParseChannel(const std::string& name, int level);

// The folder of the channel's task files under `dataset`; an error names the paths it tried.
Result<std::string> TaskDir(const Channel& c, const std::string& dataset);

// The file of a task in `dir` (a stem, a stem with .py, or a KernelBench problem number); NotFound names it.
Result<std::string> ResolveTask(const Channel& c, const std::string& dir, const std::string& task);

// Every task of the channel in `dir` (file stems, sorted; TritonBench files without the 146-'#' separator
// and KernelBench files without `class Model` are not tasks).
std::vector<std::string> ListTasks(const Channel& c, const std::string& dir);

}  // namespace kiln::bench
