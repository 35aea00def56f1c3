#include "profile/profile_task.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "exec/result.h"
#include "exec/runner.h"

namespace kiln::profile {

using nlohmann::json;

namespace {

// The run's files go to the given directory (kept) or a temporary one (removed when `owned` goes).
Result<std::string> MakeWorkDir(const std::string& given, TempDir* owned) {
  if (!given.empty()) return given;
  KILN_ASSIGN_OR_RETURN(*owned, TempDir::Make("kiln-profile-"));
  return owned->path();
}

NcuOptions WithSelection(const ProfileOptions& o) {
  NcuOptions n = o.ncu;
  if (o.use_nvtx) {
    n.nvtx_include = "kiln_profile/";
    if (n.launch_count == 1 && n.kernel_regex == ".") n.launch_count = o.max_kernels;  // every kernel of the call
  }
  return n;
}

Result<ProfileOutput> RunAndBuild(const NcuOptions& n, const std::vector<std::string>& target,
                                  std::vector<exec::KernelFacts> facts, const std::optional<DeviceRecord>& device,
                                  const std::string& source) {
  auto t0 = std::chrono::steady_clock::now();
  NcuRunner runner(n);
  auto run = runner.Run(target);
  if (!run.ok()) return run.status();
  ProfileOutput out;
  out.run = BuildProfileRun(run->report, facts, device);
  out.run.source = source;
  out.run.ncu_command = ShellJoin(run->argv);
  out.run.ncu_seconds = run->seconds;
  out.run.dropped_metrics = run->dropped_metrics;
  out.run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.csv = run->csv_text;
  return out;
}

// Each kernel takes the facts of its name (the last entry of that name wins).
void AttachFacts(const std::vector<exec::KernelFacts>& facts, ProfileRun* run) {
  for (auto& k : run->kernels) {
    for (const auto& fa : facts) {
      if (fa.name == k.name()) k.facts = fa;
    }
  }
}

// The own kernels the worker saw in the profiled call (its profile response's case); none: keep every kernel.
void KeepOwn(const json& resp, ProfileRun* run) {
  std::vector<std::string> own;
  if (auto c = resp.find("cases"); c != resp.end() && c->is_array()) {
    for (const auto& cj : *c) {
      auto names = cj.find("own_kernel_names");
      if (!cj.is_object() || names == cj.end() || !names->is_array()) continue;
      for (const auto& n : *names)
        if (n.is_string()) own.push_back(n.get<std::string>());
    }
  }
  if (!own.empty() && !KeepOwnKernels(own, run))
    run->ncu_messages.push_back("none of the profiled kernels is the candidate's own: every kernel kept");
}

// ncu found nothing to profile because the worker ran on the CPU: say so (the worker's response knows).
Status ExplainInterpreter(const json& resp, const Status& st) {
  if (!resp.is_object() || !resp.value("interpreter", false)) return st;
  return Status(st.code(),
                fmt::format("the worker ran under Triton's interpreter (no CUDA device visible to it under ncu, or "
                            "TRITON_INTERPRET=1 set), so no kernel ran on a GPU to profile; ncu said: {}",
                            st.message()));
}

}  // namespace

void ApplyWorkerResponse(const json& resp, bool own_only, ProfileRun* run) {
  if (!resp.is_object()) return;
  if (auto f = exec::KernelFactsFromJson(resp); f.ok()) AttachFacts(*f, run);
  if (own_only) KeepOwn(resp, run);
}

Result<ProfileOutput> ProfileTask(const task::TaskSpec& spec, const std::optional<std::string>& candidate_source,
                                  const ProfileOptions& o, const std::optional<DeviceRecord>& device) {
  TempDir owned;
  KILN_ASSIGN_OR_RETURN(std::string dir, MakeWorkDir(o.work_dir, &owned));
  exec::EvalRequest req;
  req.task = spec;
  req.candidate_source = candidate_source;
  req.trials = 1;
  req.policy = exec::Policy::kTrusted;
  req.autotune_picks = o.autotune_picks;
  if (!o.case_name.empty()) req.cases = {o.case_name};
  json rj = req.ToJson("profile");
  rj["mode"] = "profile";
  if (!o.case_name.empty()) rj["profile_case"] = o.case_name;
  const std::string req_path = dir + "/request.json", resp_path = dir + "/response.json";
  KILN_RETURN_IF_ERROR(WriteFile(req_path, DumpJson(rj, 2) + "\n"));
  std::string python = exec::ResolvePython(o.python);
  NcuOptions n = WithSelection(o);
  auto wdir = exec::FindWorkerDir();
  if (wdir.ok()) {
    const char* pp = std::getenv("PYTHONPATH");
    n.env["PYTHONPATH"] = pp && *pp ? *wdir + ":" + pp : *wdir;
  }
  n.env["KILN_WORKER_TMP"] = dir;  // the worker's module files, removed with the directory
  std::vector<std::string> target = {python, "-m", "kiln_worker", "--request", req_path, "--out", resp_path};
  auto out =
      RunAndBuild(n, target, {}, device, "task:" + spec.name + (o.case_name.empty() ? "" : " case " + o.case_name));
  // The worker's response explains failures better than ncu's exit status, and carries the facts.
  json resp;
  if (auto text = ReadFile(resp_path); text.ok()) resp = ParseJson(*text);
  if (!out.ok()) {
    if (resp.is_object() && resp.value("verdict", "ok") != "ok") {
      return Status(out.status().code(),
                    fmt::format("the task failed under the profiler: verdict {}: {}\n{}", resp.value("verdict", "?"),
                                resp.value("message", ""), out.status().message()));
    }
    return ExplainInterpreter(resp, out.status());
  }
  if (resp.is_object()) out->worker_response = resp;
  ApplyWorkerResponse(resp, o.own_kernels_only, &out->run);
  return out;
}

Result<ProfileOutput> ProfileScript(const std::string& script, const std::vector<std::string>& args,
                                    const ProfileOptions& o, const std::optional<DeviceRecord>& device) {
  if (access(script.c_str(), R_OK) != 0) return NotFound(fmt::format("{}: no such script", script));
  TempDir owned;
  KILN_ASSIGN_OR_RETURN(std::string dir, MakeWorkDir(o.work_dir, &owned));
  // The script writes its compile facts here; an outer KILN_FACTS_OUT (recording scripts) wins.
  const char* outer = std::getenv("KILN_FACTS_OUT");
  const std::string facts_path = outer && *outer ? std::string(outer) : dir + "/facts.json";
  std::string python = exec::ResolvePython(o.python);
  NcuOptions n = WithSelection(o);
  n.env["KILN_FACTS_OUT"] = facts_path;
  std::vector<std::string> target = {python, script};
  target.insert(target.end(), args.begin(), args.end());
  KILN_ASSIGN_OR_RETURN(ProfileOutput out, RunAndBuild(n, target, {}, device, "script:" + script));
  if (auto text = ReadFile(facts_path); text.ok()) {
    json j = ParseJson(*text);
    if (auto f = exec::KernelFactsFromJson(j); f.ok()) AttachFacts(*f, &out.run);
  }
  return out;
}

}  // namespace kiln::profile
