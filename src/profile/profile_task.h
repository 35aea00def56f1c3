// kiln/profile: profiling a task's kernels (or a plain script's) under ncu, end to end.
//
// Task: the worker's one-shot mode (`python3 -m kiln_worker --request req.json --out resp.json`,
// mode "profile") runs one case once after a warm-up call, with the profiled call inside the NVTX
// range "kiln_profile"; ncu selects that range (`--nvtx --nvtx-include kiln_profile/`), so the
// warm-up (compile, autotune) is never profiled and every kernel of the call is (launch-count 0 =
// all, capped by max_kernels). The response file carries the compile facts, joined by name.
//
// Script: any Python program that follows the same convention (warm-up, then the call to profile
// inside torch.cuda.nvtx.range("kiln_profile")); it may write compile facts as JSON
// ({"kernels": [...]}) to $KILN_FACTS_OUT. tests/profile/kernels/ holds such scripts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "profile/device.h"
#include "profile/ncu_runner.h"
#include "profile/profile.h"
#include "task/task.h"

namespace kiln::profile {

struct ProfileOptions {
  NcuOptions ncu;         // kernel_regex, launch skip/count, timeout, ncu path
  std::string python;     // empty: $KILN_PYTHON, else python3
  std::string case_name;  // task case to profile; empty: the task's first case
  bool use_nvtx = true;   // select the "kiln_profile" NVTX range
  int max_kernels = 64;   // launch-count cap when profiling every kernel of the call
  std::string work_dir;   // for request/response files; empty: a fresh dir under /tmp
  bool keep_csv = false;  // fill ProfileRun::csv (for --save-csv)
  // Task mode: keep only the candidate's (or the module's) own Triton kernels, as the worker names them
  // (`own_kernel_names` of its profile response); the others are listed in ProfileRun::skipped_kernels.
  bool own_kernels_only = true;
  // Autotune picks of earlier trusted requests (exec::EvalRequest::autotune_picks): the profiled run's
  // autotuned kernels take them instead of tuning again under ncu.
  nlohmann::json autotune_picks = nlohmann::json::array();
};

struct ProfileOutput {
  ProfileRun run;
  std::string csv;                 // the raw CSV ncu printed
  nlohmann::json worker_response;  // task mode: the worker's response (may be null)
};

// Task mode, once ncu's rows are in `run`: the worker's profile response's compile facts joined by kernel name
// and, when own_only, only the candidate's (or module's) own kernels kept (`own_kernel_names` of its cases; the
// others listed in run->skipped_kernels; every kernel kept, with a message, when none of them is profiled).
void ApplyWorkerResponse(const nlohmann::json& resp, bool own_only, ProfileRun* run);

// The worker's response of a run that failed (ncu found no kernel) says when the worker was on Triton's
// interpreter: the error then says so.
Result<ProfileOutput> ProfileTask(const task::TaskSpec& spec, const std::optional<std::string>& candidate_source,
                                  const ProfileOptions& o, const std::optional<DeviceRecord>& device);

Result<ProfileOutput> ProfileScript(const std::string& script, const std::vector<std::string>& args,
                                    const ProfileOptions& o, const std::optional<DeviceRecord>& device);

}  // namespace kiln::profile
