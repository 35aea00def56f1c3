// `kiln profile`: hardware counters (Nsight Compute), roofline and diagnosis (docs/profile.md).
//
//   kiln profile --task T [--candidate C] [--case NAME] [--json] [--html FILE] [--ncu PATH]
//   kiln profile --script FILE.py [-- ARGS...]        (a script following the NVTX convention)
//   kiln profile --from-csv FILE [--device-file F] [--facts F] [--source F.py]   (no GPU needed)
//
// Exit codes: 0 profiled and diagnosed, 1 profiling failed (ncu missing, no permission, kernel not
// found, the task crashed), 2 usage. Argument handling only; the work is in src/profile and
// src/diagnose.
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "common/file.h"
#include "diagnose/report.h"
#include "diagnose/static_facts.h"
#include "exec/runner.h"
#include "profile/device.h"
#include "profile/metrics.h"
#include "profile/profile_task.h"
#include "task/task.h"

namespace kiln::cli {

namespace {

using nlohmann::json;

struct ProfileFlags {
  std::string task, candidate, entry, bench, format, case_name;
  std::string script;
  std::vector<std::string> script_args;
  std::string from_csv;
  std::string facts, source, device_file, cache_dir;
  bool no_device = false;
  bool json = false;
  std::string html, save_csv, ncu, python;
  std::string kernel = ".";
  int launch_skip = 0, launch_count = 1;
  bool no_nvtx = false;
  int timeout_s = 600;
  bool list_metrics = false;
};

int Fail(const Status& s) {
  std::fprintf(stderr, "kiln profile: error: %s\n", s.message().c_str());
  return 1;
}

int Run(const ProfileFlags& f) {
  if (f.list_metrics) {
    for (const auto& m : profile::DefaultMetrics()) std::printf("%s\n", m.c_str());
    return 0;
  }
  int modes = !f.task.empty() + !f.script.empty() + !f.from_csv.empty();
  if (modes != 1) {
    std::fprintf(stderr, "kiln profile: error: give exactly one of --task, --script, --from-csv\n");
    return 2;
  }
  // Facts given by hand: compile facts / static booleans (JSON), and the static model of a source.
  std::vector<profile::KernelFacts> facts;
  if (!f.facts.empty()) {
    auto text = ReadFile(f.facts);
    if (!text.ok()) return Fail(text.status());
    json j = json::parse(*text, nullptr, false);
    if (j.is_discarded()) return Fail(ParseError(f.facts + ": not valid JSON"));
    auto k = profile::KernelFactsFromJson(j);
    if (!k.ok()) return Fail(Status(k.status().code(), f.facts + ": " + k.status().message()));
    facts = *k;
  }
  std::string source = f.source;
  if (source.empty()) source = !f.candidate.empty() ? f.candidate : !f.script.empty() ? f.script : "";
  // Device peaks: a file, the cache via the worker (live modes), or none.
  std::optional<profile::DeviceRecord> device;
  if (!f.device_file.empty()) {
    auto d = profile::LoadDeviceRecordFile(f.device_file);
    if (!d.ok()) return Fail(d.status());
    device = *d;
  } else if (f.from_csv.empty() && !f.no_device) {
    exec::WorkerOptions wo;
    wo.python = f.python;
    wo.isolation = exec::Isolation::kShared;
    exec::WorkerRunner runner(wo);
    profile::JsonDeviceStore store(f.cache_dir);
    auto d = profile::CharacterizeDevice(runner, {}, store);
    if (d.ok()) {
      device = *d;
    } else {
      std::fprintf(stderr, "kiln profile: warning: no device peaks (%s); roofline fractions unavailable\n",
                   d.status().message().c_str());
    }
  }
  profile::ProfileOptions po;
  po.ncu.ncu_path = f.ncu;
  po.ncu.kernel_regex = f.kernel;
  po.ncu.launch_skip = f.launch_skip;
  po.ncu.launch_count = f.launch_count;
  po.ncu.timeout = std::chrono::seconds(f.timeout_s);
  po.python = f.python;
  po.case_name = f.case_name;
  po.use_nvtx = !f.no_nvtx;
  profile::ProfileRun run;
  std::string csv;
  if (!f.from_csv.empty()) {
    auto r = profile::ProfileFromCsv(f.from_csv, {}, device);
    if (!r.ok()) return Fail(r.status());
    run = std::move(r).value();
  } else if (!f.script.empty()) {
    auto r = profile::ProfileScript(f.script, f.script_args, po, device);
    if (!r.ok()) return Fail(r.status());
    run = std::move(r->run);
    csv = r->csv;
  } else {
    task::LoadOptions lo;
    lo.format = f.format;
    lo.entry = f.entry;
    lo.bench = f.bench;
    auto spec = task::LoadTask(f.task, lo);
    if (!spec.ok()) return Fail(spec.status());
    std::optional<std::string> cand;
    if (!f.candidate.empty()) {
      auto text = ReadFile(f.candidate);
      if (!text.ok()) return Fail(text.status());
      cand = *text;
    }
    if (source.empty()) source = spec->path;
    auto r = profile::ProfileTask(*spec, cand, po, device);
    if (!r.ok()) return Fail(r.status());
    run = std::move(r->run);
    csv = r->csv;
  }
  // Join: static facts of the source, then the hand-given facts, onto each kernel's compile facts.
  if (!source.empty()) {
    auto sf = diagnose::StaticFactsFromFile(source);
    if (sf.ok()) {
      facts = profile::MergeFacts(facts, *sf);
    } else if (!f.source.empty()) {
      std::fprintf(stderr, "kiln profile: warning: static analysis of %s failed: %s\n", source.c_str(),
                   sf.status().message().c_str());
    }
  }
  for (auto& k : run.kernels) {
    std::vector<profile::KernelFacts> mine;
    if (k.facts) mine.push_back(*k.facts);
    for (const auto& fa : facts) {
      if (fa.name == k.name()) mine = profile::MergeFacts(mine, {fa});
    }
    if (!mine.empty()) k.facts = mine.front();
  }
  if (!f.save_csv.empty()) {
    if (csv.empty() && !f.from_csv.empty()) {
      auto t = ReadFile(f.from_csv);
      if (t.ok()) csv = *t;
    }
    if (auto s = WriteFile(f.save_csv, csv); !s.ok()) return Fail(s);
  }
  auto report = diagnose::DiagnoseRun(std::move(run));
  if (!f.html.empty()) {
    if (auto s = WriteFile(f.html, diagnose::RenderHtml(report)); !s.ok()) return Fail(s);
  }
  if (f.json) {
    std::printf("%s\n", diagnose::ToJson(report).dump(2).c_str());
  } else {
    std::fputs(diagnose::FormatText(report).c_str(), stdout);
    if (!f.html.empty()) std::printf("html report: %s\n", f.html.c_str());
  }
  return 0;
}

Command RegisterProfile(CLI::App& app) {
  auto* sub = app.add_subcommand("profile", "Hardware counters (ncu), roofline and diagnosis of a task's kernels");
  auto f = std::make_shared<ProfileFlags>();
  sub->add_option("--task", f->task, "Task file (KernelBench, TritonBench, kiln)");
  sub->add_option("--candidate", f->candidate, "Candidate source to profile instead of the task's own code");
  sub->add_option("--entry", f->entry, "Entry function (kiln/tritonbench tasks)");
  sub->add_option("--bench", f->bench, "Bench file (kiln tasks)");
  sub->add_option("--format", f->format, "Task format (default: detect)");
  sub->add_option("--case", f->case_name, "Case to profile (default: the first)");
  sub->add_option("--script", f->script, "Profile a Python script that follows the kiln_profile NVTX convention");
  sub->add_option("--script-arg", f->script_args, "Argument for --script (repeatable)");
  sub->add_option("--from-csv", f->from_csv, "Diagnose a recorded `ncu --csv --page raw` file (no GPU needed)");
  sub->add_option("--facts", f->facts, "Compile/static facts JSON ({\"kernels\": [...]}, e.g. a worker eval response)");
  sub->add_option("--source", f->source, "Python source to analyse for static facts (default: candidate, script or task)");
  sub->add_option("--device-file", f->device_file, "Device record JSON (as `kiln device --json` prints) for the roofs");
  sub->add_flag("--no-device", f->no_device, "Do not characterize the device (no roofline fractions)");
  sub->add_option("--cache-dir", f->cache_dir, "Device record cache directory");
  sub->add_flag("--json", f->json, "Print JSON");
  sub->add_option("--html", f->html, "Write a self-contained HTML report");
  sub->add_option("--save-csv", f->save_csv, "Save the raw ncu CSV");
  sub->add_option("--ncu", f->ncu, "Path to ncu (default: $KILN_NCU, PATH, /opt/nvidia/nsight-compute/*/ncu, /usr/local/cuda/bin/ncu)");
  sub->add_option("--python", f->python, "Python with torch+triton (default: $KILN_PYTHON, python3)");
  sub->add_option("--kernel", f->kernel, "Kernel name regex (ncu -k regex:...)");
  sub->add_option("--launch-skip", f->launch_skip, "Matching launches to skip");
  sub->add_option("--launch-count", f->launch_count, "Matching launches to profile (0: all)");
  sub->add_flag("--no-nvtx", f->no_nvtx, "Do not restrict profiling to the kiln_profile NVTX range");
  sub->add_option("--timeout", f->timeout_s, "ncu timeout in seconds (KILN_NCU_TIMEOUT_S overrides)");
  sub->add_flag("--list-metrics", f->list_metrics, "Print the metric list and exit");
  return {sub, [f]() { return Run(*f); }};
}

Registrar reg(45, RegisterProfile);

}  // namespace

}  // namespace kiln::cli
