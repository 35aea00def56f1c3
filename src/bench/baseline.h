// kiln/bench: KernelBench's second reference, torch.compile (docs/bench.md, "torch.compile baseline").
//
// Measured: one extra pair per task whose candidate is the reference under torch.compile (policy trusted),
// timed interleaved against the eager reference in the same worker process; its ratio eager/compile turns
// each sample's speedup over eager into its speedup over torch.compile. Read: KernelBench's baseline JSON
// (results/timing/<hardware>/baseline_time_torch_compile_*.json: {"level1": {"19_ReLU.py": {"mean": ms,
// ...}}}), divided by the candidate's own time.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/status.h"

namespace kiln::bench {

// The compile pair's candidate: the reference module with `ModelNew` = the reference under
// torch.compile (default mode, inductor). The compile happens in the check trials, before timing (compile
// time excluded, warm-up included). Under Triton's interpreter (no timing) it stays eager.
std::string CompileBaselineSource(const std::string& reference_text);

// The id of a task's compile pair in the batch: "<task>#@compile" (a sample's is "<task>#<sample>", and a
// sample name cannot start with '@': bench/samples.cc).
std::string CompileBaselineId(const std::string& task);

// KernelBench's baseline file for one level: task stem -> mean ms. Errors name the file (unreadable, not
// JSON, no "level<L>" object, an entry without a positive "mean").
Result<std::map<std::string, double>> ReadBaselineFile(const std::string& path, int level);

// The speedup over torch.compile of a sample with `speedup_eager` (eager ms / candidate ms), given its task's
// measured eager/compile ratio; nullopt when either is missing.
std::optional<double> SpeedupVsCompile(std::optional<double> speedup_eager, std::optional<double> eager_over_compile);

}  // namespace kiln::bench
