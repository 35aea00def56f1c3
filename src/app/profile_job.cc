#include "app/profile_job.h"

#include <cstdio>

#include "app/facts_join.h"
#include "app/runner_factory.h"
#include "common/file.h"
#include "common/json.h"
#include "common/source_text.h"
#include "common/strings.h"
#include "diagnose/report.h"
#include "profile/device.h"
#include "profile/metrics.h"
#include "profile/profile_task.h"
#include "task/task.h"

namespace kiln::app {

namespace {

using nlohmann::json;

int Fail(const Status& s) {
  std::fprintf(stderr, "kiln profile: error: %s\n", s.message().c_str());
  return 1;
}

// --facts: compile facts / static booleans given by hand (JSON).
Result<std::vector<exec::KernelFacts>> GivenFacts(const std::string& path) {
  if (path.empty()) return std::vector<exec::KernelFacts>();
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = ParseJson(text);
  if (j.is_discarded()) return ParseError(path + ": not valid JSON");
  auto k = exec::KernelFactsFromJson(j);
  if (!k.ok()) return Status(k.status().code(), path + ": " + k.status().message());
  return *k;
}

// Device peaks: a file, the cache via the worker (live modes), or none.
Result<std::optional<profile::DeviceRecord>> DevicePeaks(const ProfileJobOptions& o) {
  if (!o.device_file.empty()) {
    KILN_ASSIGN_OR_RETURN(profile::DeviceRecord d, profile::LoadDeviceRecordFile(o.device_file));
    return std::optional<profile::DeviceRecord>(d);
  }
  if (!o.from_csv.empty() || o.no_device) return std::optional<profile::DeviceRecord>();
  RunnerSpec spec;
  spec.python = o.worker.python;
  spec.isolation = exec::Isolation::kShared;
  KILN_ASSIGN_OR_RETURN(auto runner, MakeRunner(spec));
  profile::JsonDeviceStore store(o.cache_dir);
  auto d = profile::CharacterizeDevice(*runner, {}, store);
  if (d.ok()) return std::optional<profile::DeviceRecord>(*d);
  std::fprintf(stderr, "kiln profile: warning: no device peaks (%s); roofline fractions unavailable\n",
               d.status().message().c_str());
  return std::optional<profile::DeviceRecord>();
}

struct Profiled {
  profile::ProfileRun run;
  std::string csv;
  std::string source;  // the profiled module's source file, for its static facts ("" when none)
};

// --metrics: every metric kiln reads (""), the roofline's ("roofline"), or the roofline's and a list.
std::vector<std::string> MetricList(const ProfileJobOptions& o) {
  if (o.metrics.empty()) return profile::DefaultMetrics();
  std::vector<std::string> v = profile::RooflineMetrics();
  if (o.metrics == "roofline") return v;
  for (const auto& m : SplitComma(o.metrics))
    if (std::find(v.begin(), v.end(), m) == v.end()) v.push_back(m);
  return v;
}

// Runs ncu (or reads a recording) in the mode the options name.
Result<Profiled> RunNcu(const ProfileJobOptions& o, const std::optional<profile::DeviceRecord>& device) {
  profile::ProfileOptions po;
  po.ncu.ncu_path = o.ncu;
  po.ncu.kernel_regex = o.kernel;
  po.ncu.launch_skip = o.launch_skip;
  po.ncu.launch_count = o.launch_count;
  po.ncu.timeout = std::chrono::seconds(o.timeout_s);
  if (!o.metrics.empty()) po.ncu.metrics = MetricList(o);
  po.python = o.worker.python;
  po.case_name = o.case_name;
  po.use_nvtx = !o.no_nvtx;
  // an explicit --kernel regex selects by itself
  po.own_kernels_only = !o.all_kernels && (o.kernel.empty() || o.kernel == ".");
  Profiled p;
  p.source = o.source;
  if (p.source.empty()) p.source = !o.candidate.empty() ? o.candidate : !o.script.empty() ? o.script : "";
  if (!o.from_csv.empty()) {
    KILN_ASSIGN_OR_RETURN(p.run, profile::ProfileFromCsv(o.from_csv, {}, device));
    return p;
  }
  if (!o.script.empty()) {
    KILN_ASSIGN_OR_RETURN(auto r, profile::ProfileScript(o.script, o.script_args, po, device));
    p.run = std::move(r.run);
    p.csv = r.csv;
    return p;
  }
  KILN_ASSIGN_OR_RETURN(task::TaskSpec spec, task::LoadTask(o.task, o.task_options.ToLoadOptions()));
  std::optional<std::string> cand;
  if (!o.candidate.empty()) {
    KILN_ASSIGN_OR_RETURN(std::string text, ReadPythonSource(o.candidate));
    cand = text;
  }
  if (p.source.empty()) p.source = spec.path;
  KILN_ASSIGN_OR_RETURN(auto r, profile::ProfileTask(spec, cand, po, device));
  p.run = std::move(r.run);
  p.csv = r.csv;
  return p;
}

}  // namespace

int RunProfile(const ProfileJobOptions& o) {
  if (o.list_metrics) {
    for (const auto& m : MetricList(o)) std::printf("%s\n", m.c_str());
    return 0;
  }
  if (!o.task.empty() + !o.script.empty() + !o.from_csv.empty() != 1) {
    std::fprintf(stderr, "kiln profile: error: give exactly one of --task, --script, --from-csv\n");
    return 2;
  }
  auto given = GivenFacts(o.facts);
  if (!given.ok()) return Fail(given.status());
  auto device = DevicePeaks(o);
  if (!device.ok()) return Fail(device.status());
  auto p = RunNcu(o, *device);
  if (!p.ok()) return Fail(p.status());
  // Join: static facts of the source, then the hand-given facts, onto each kernel's compile facts.
  std::optional<SourceText> source;
  Status source_status = Status::Ok();
  if (!p->source.empty()) {
    if (auto text = ReadPythonSource(p->source); text.ok())
      source = SourceText{*text, p->source};
    else
      source_status = text.status();
  }
  if (Status s = JoinFacts(&p->run, source, *given); !s.ok()) source_status = s;
  if (!source_status.ok() && !o.source.empty())
    std::fprintf(stderr, "kiln profile: warning: static analysis of %s failed: %s\n", p->source.c_str(),
                 source_status.message().c_str());
  if (!o.save_csv.empty()) {
    if (p->csv.empty() && !o.from_csv.empty())
      if (auto t = ReadFile(o.from_csv); t.ok()) p->csv = *t;
    if (auto s = WriteFile(o.save_csv, p->csv); !s.ok()) return Fail(s);
  }
  auto report = diagnose::DiagnoseRun(std::move(p->run));
  if (!o.html.empty())
    if (auto s = WriteFile(o.html, diagnose::RenderHtml(report)); !s.ok()) return Fail(s);
  if (o.json) {
    json j = diagnose::ToJson(report);
    if (!j.contains("schema_version")) j["schema_version"] = 1;  // besides "schema": every --json has it
    std::printf("%s\n", j.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    std::fputs(diagnose::FormatText(report).c_str(), stdout);
    if (!o.html.empty()) std::printf("html report: %s\n", o.html.c_str());
  }
  return 0;
}

}  // namespace kiln::app
