#include "app/ci_job.h"

#include <cstdio>
#include <filesystem>

#include "app/candidate_runner.h"
#include "app/ci.h"
#include "common/file.h"
#include "task/task.h"

namespace kiln::app {

namespace {

int Error(const std::string& m) {
  std::fprintf(stderr, "kiln ci: error: %s\n", m.c_str());
  return 2;
}

// The baseline to compare with (none with --update-baseline when the file does not exist yet).
Result<std::optional<Baseline>> LoadBaseline(const CiJobOptions& o) {
  if (std::filesystem::exists(o.baseline)) {
    KILN_ASSIGN_OR_RETURN(Baseline b, Baseline::Load(o.baseline));
    return std::optional<Baseline>(b);
  }
  if (!o.update) return NotFound(o.baseline + " does not exist; create it with --update-baseline");
  return std::optional<Baseline>();
}

// `kiln ci --json` (docs/ci.md): the report as one object.
nlohmann::json CiReportJson(const CiReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : r.rows) {
    rows.push_back({{"task", x.task},
                    {"case", x.case_name},
                    {"status", x.status},
                    {"baseline_ms", x.baseline_ms},
                    {"new_ms", x.new_ms},
                    {"remeasured_ms", x.remeasured_ms},
                    {"ratio", x.ratio},
                    {"message", x.message},
                    {"time_s", x.time_s}});
  }
  return {{"schema_version", 1},    {"kind", "kiln-ci-report"},
          {"gpu_name", r.gpu_name}, {"baseline_gpu", r.baseline_gpu},
          {"warnings", r.warnings}, {"regressions", r.regressions},
          {"failures", r.failures}, {"exit_code", r.exit_code},
          {"wall_s", r.wall_s},     {"rows", rows}};
}

// A task file that cannot be loaded: reported (stderr and a failed row) while the other tasks run.
CiRow UnloadableRow(const std::string& path, std::string message) {
  while (!message.empty() && message.back() == '\n') message.pop_back();
  std::fprintf(stderr, "%s\n", message.c_str());
  CiRow row;
  row.task = path;
  row.case_name = "*";
  row.status = "failed";
  row.message = "error: " + message.substr(0, message.find('\n'));
  return row;
}

}  // namespace

int RunCiJob(const CiJobOptions& o) {
  std::vector<CiTask> tasks;
  std::vector<CiRow> unloadable;
  for (const auto& p : o.tasks) {
    task::LoadOptions lo;
    lo.format = o.format;
    auto spec = task::LoadTask(p, lo);
    if (!spec.ok()) {
      unloadable.push_back(UnloadableRow(p, spec.status().message()));
      continue;
    }
    tasks.push_back({*spec, std::nullopt});
  }
  if (tasks.empty()) return Error("no task could be loaded");
  auto base = LoadBaseline(o);
  if (!base.ok()) return Error(base.status().message());
  auto runner = MakeRunner(o.worker.Spec(exec::Isolation::kFork));
  if (!runner.ok()) return Error(runner.status().message());
  CandidateRunner ev(runner->get(), nullptr, false, nullptr, 0);
  CiOptions co;
  co.threshold_pct = o.threshold;
  co.remeasure = !o.no_remeasure;
  co.update_baseline = o.update;
  co.allow_different_gpu = o.allow_gpu;
  auto r = RunCi(tasks, ev, *base ? &**base : nullptr, co);
  if (!r.ok()) return Error(r.status().message());
  for (const auto& row : unloadable) {
    r->rows.push_back(row);
    ++r->failures;
    if (r->exit_code == 0) r->exit_code = 1;
  }
  // --json: stdout carries only the report; the table's place and notes go to stderr
  std::FILE* text_out = o.json ? stderr : stdout;
  if (o.json) {
    std::printf("%s\n", CiReportJson(*r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fputs(FormatCiTable(*r).c_str(), stdout);
  }
  if (!o.junit.empty())
    if (auto s = WriteFile(o.junit, JUnitXml(*r)); !s.ok()) std::fprintf(stderr, "kiln ci: %s\n", s.message().c_str());
  if (o.update && r->exit_code != 2) {
    if (auto s = r->updated.Save(o.baseline); !s.ok()) return Error(s.message());
    std::fprintf(text_out, "wrote baseline %s (%zu tasks, %s)\n", o.baseline.c_str(), r->updated.tasks.size(),
                 r->updated.gpu_name.c_str());
    return r->failures > 0 ? 1 : 0;
  }
  return r->exit_code;
}

}  // namespace kiln::app
