// kiln/profile: a profiled run, joined: counters per kernel launch + compile facts + static facts
// + roofline + share of the summed GPU time.
//
// Compile facts come from the worker's eval response ("kernels": name, n_regs, n_spills,
// shared_bytes, num_warps, num_stages, grid) or a facts file of the same shape; static facts
// (e.g. "this kernel has tl.dot on fp32 inputs without tensor cores") from the analysis model, or
// from the same file as booleans until src/analysis can be joined here.
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
#include "profile/device.h"
#include "profile/ncu_csv.h"
#include "profile/roofline.h"

namespace kiln::profile {

// What is known about one kernel without counters.
struct KernelFacts {
  std::string name;
  std::optional<int> n_regs, n_spills, shared_bytes, num_warps, num_stages;
  std::vector<int> grid;
  std::map<std::string, nlohmann::json> constexprs;
  // Static facts (analysis). fp32_dot: a tl.dot whose inputs are fp32 and whose input_precision
  // keeps it off the tensor cores ("ieee", or allow_tf32=False).
  bool has_dot = false;
  bool fp32_dot_without_tensor_cores = false;
};

// Reads {"kernels": [{...KernelFacts fields...}]} (the worker's eval response works as is), or a
// bare array of such objects. Unknown fields are ignored.
Result<std::vector<KernelFacts>> KernelFactsFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const KernelFacts& f);

struct KernelProfile {
  NcuKernelRow row;
  Roofline roofline;
  double time_share = 1.0;           // of the summed gpu__time_duration over all profiled rows
  std::optional<KernelFacts> facts;  // joined by kernel name
  const std::string& name() const { return row.name; }
};

struct ProfileRun {
  std::vector<KernelProfile> kernels;  // launch order
  std::optional<DeviceRecord> device;
  std::string source;                  // "csv:<path>" or "task:<name>"
  std::string ncu_command;             // shell form, when ncu ran
  std::vector<std::string> dropped_metrics;
  std::vector<std::string> ncu_messages;
  double ncu_seconds = 0;
  double wall_seconds = 0;
  double total_seconds = 0;            // summed gpu__time_duration
};

// Joins the report's rows with facts (by kernel name) and device peaks, computes the roofline and
// each kernel's share of the summed duration.
ProfileRun BuildProfileRun(const NcuReport& report, const std::vector<KernelFacts>& facts,
                           const std::optional<DeviceRecord>& device);

// Reads a recorded raw CSV.
Result<ProfileRun> ProfileFromCsv(const std::string& csv_path, const std::vector<KernelFacts>& facts,
                                  const std::optional<DeviceRecord>& device);

}  // namespace kiln::profile
