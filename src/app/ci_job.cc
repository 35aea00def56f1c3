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

}  // namespace

int RunCiJob(const CiJobOptions& o) {
  std::vector<CiTask> tasks;
  for (const auto& p : o.tasks) {
    task::LoadOptions lo;
    lo.format = o.format;
    auto spec = task::LoadTask(p, lo);
    if (!spec.ok()) {
      std::fprintf(stderr, "%s\n", spec.status().message().c_str());
      return 2;
    }
    tasks.push_back({*spec, std::nullopt});
  }
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
  std::fputs(FormatCiTable(*r).c_str(), stdout);
  if (!o.junit.empty())
    if (auto s = WriteFile(o.junit, JUnitXml(*r)); !s.ok()) std::fprintf(stderr, "kiln ci: %s\n", s.message().c_str());
  if (o.update && r->exit_code != 2) {
    if (auto s = r->updated.Save(o.baseline); !s.ok()) return Error(s.message());
    std::printf("wrote baseline %s (%zu tasks, %s)\n", o.baseline.c_str(), r->updated.tasks.size(),
                r->updated.gpu_name.c_str());
    return r->failures > 0 ? 1 : 0;
  }
  return r->exit_code;
}

}  // namespace kiln::app
