// kiln/app: `kiln profile`: hardware counters (Nsight Compute), roofline and diagnosis of a task's
// kernels, a script's, or a recorded CSV's (docs/profile.md).
//
// Exit codes: 0 profiled and diagnosed, 1 profiling failed (ncu missing, no permission, kernel not
// found, the task crashed), 2 usage.
#pragma once

#include <string>
#include <vector>

#include "app/options.h"

namespace kiln::app {

struct ProfileJobOptions {
  std::string task, candidate, case_name;
  TaskOptions task_options;
  std::string script;
  std::vector<std::string> script_args;
  std::string from_csv;
  std::string facts, source, device_file, cache_dir;
  bool no_device = false;
  bool json = false;
  std::string html, save_csv, ncu;
  WorkerFlags worker;  // --python
  std::string kernel = ".";
  int launch_skip = 0, launch_count = 1;
  bool no_nvtx = false;
  bool all_kernels = false;  // --task: every kernel of the call, not only the candidate's own Triton kernels
  int timeout_s = 600;
  bool list_metrics = false;
  // --metrics: "" every metric kiln collects; "roofline" only what the roofline needs (the duration, DRAM bytes,
  // FLOP counters, clock: one or two replay passes, so a long kernel profiles in seconds); else a comma-separated
  // list of ncu metric names, collected beside the roofline's.
  std::string metrics;
};

int RunProfile(const ProfileJobOptions& o);

}  // namespace kiln::app
