// kiln/profile: a profiled run, joined: counters per kernel launch + compile facts + static facts
// + roofline + share of the summed GPU time.
//
// Compile and static facts are exec::KernelFacts (exec/kernel_facts.h), joined by kernel name.
//
// Roadmap: ProfileTask (profile_task.h) fills a ProfileRun from a task via ncu; ProfileFromCsv
// fills it from a recorded CSV. Diagnosis and reports (src/diagnose) read ProfileRun.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "exec/kernel_facts.h"
#include "profile/device.h"
#include "profile/ncu_csv.h"
#include "profile/roofline.h"

namespace kiln::profile {

struct KernelProfile {
  NcuKernelRow row;
  Roofline roofline;
  double time_share = 1.0;                 // of the summed gpu__time_duration over all profiled rows
  std::optional<exec::KernelFacts> facts;  // joined by kernel name
  const std::string& name() const { return row.name; }
};

struct ProfileRun {
  std::vector<KernelProfile> kernels;  // launch order
  std::optional<DeviceRecord> device;
  std::string source;       // "csv:<path>" or "task:<name>"
  std::string ncu_command;  // shell form, when ncu ran
  std::vector<std::string> dropped_metrics;
  std::vector<std::string> ncu_messages;
  double ncu_seconds = 0;
  double wall_seconds = 0;
  double total_seconds = 0;  // summed gpu__time_duration
  // Kernels of the profiled call left out of `kernels` (KeepOwnKernels): full names, launch order.
  std::vector<std::string> skipped_kernels;
};

// Keeps the kernels whose name is in `own` (the candidate's or module's own Triton kernels, by name), moving the
// others' names to skipped_kernels; time shares are recomputed over the kept ones. Keeps everything (and returns
// false) when none of the profiled kernels is named in `own`.
bool KeepOwnKernels(const std::vector<std::string>& own, ProfileRun* run);

// A kernel name for text: a C++ signature ("void at::native::(anonymous namespace)::foo_kernel<float, 4>(int,
// float*)") becomes its last identifier ("foo_kernel"); a Triton name is kept as it is.
std::string ShortKernelName(const std::string& name);

// Joins the report's rows with facts (by kernel name) and device peaks, computes the roofline and
// each kernel's share of the summed duration.
ProfileRun BuildProfileRun(const NcuReport& report, const std::vector<exec::KernelFacts>& facts,
                           const std::optional<DeviceRecord>& device);

// Reads a recorded raw CSV.
Result<ProfileRun> ProfileFromCsv(const std::string& csv_path, const std::vector<exec::KernelFacts>& facts,
                                  const std::optional<DeviceRecord>& device);

}  // namespace kiln::profile
