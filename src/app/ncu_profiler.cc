#include "app/ncu_profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/facts_join.h"
#include "common/file.h"
#include "common/source_text.h"
#include "diagnose/report.h"
#include "profile/ncu_runner.h"
#include "profile/profile_task.h"

namespace kiln::app {

std::string SearchMoveName(const std::string& m) {
  if (m == "group_m_swizzle") return "group_m";
  if (m == "multiple_rows_per_program") return "bigger_block";
  return m;
}

search::FindingView ToFindingView(const diagnose::Finding& f) {
  search::FindingView x;
  x.rule = f.rule;
  x.severity = diagnose::SeverityName(f.severity);
  x.message = f.message;
  for (auto m : f.moves) {
    x.moves.push_back(SearchMoveName(diagnose::MoveName(m)));
    // Several rows per program: a bigger block where the search has one, and the rewrite that loops over
    // rows (the rewrite proposer's) where it has none.
    if (m == diagnose::Move::kMultipleRowsPerProgram) x.moves.push_back("rows_per_program");
  }
  x.evidence = diagnose::ToJson(f)["evidence"];
  return x;
}

Status NcuProfiler::Available() {
  auto ncu = profile::FindNcu(ncu_path_);
  if (!ncu.ok()) return Unavailable("ncu not found (" + ncu.status().message() + "); measuring only");
  ncu_path_ = *ncu;
  return Status::Ok();
}

Result<search::ProfileSummary> NcuProfiler::Profile(const task::TaskSpec& task,
                                                    const std::optional<std::string>& source,
                                                    const std::string& case_name) {
  profile::ProfileOptions po;
  po.ncu.ncu_path = ncu_path_;
  po.python = python_;
  po.case_name = case_name;
  po.autotune_picks = picks_;
  if (limit_s_ > 0)
    po.ncu.timeout = std::min(po.ncu.timeout, std::chrono::seconds(static_cast<int64_t>(std::ceil(limit_s_))));
  auto out = profile::ProfileTask(task, source, po, device_);
  if (!out.ok()) return out.status();
  // The static facts of what ran (the candidate, else the task's module), as `kiln profile` joins them.
  std::optional<SourceText> text;
  if (source)
    text = SourceText{*source, task.path};
  else if (auto t = ReadPythonSource(task.path); t.ok())
    text = SourceText{*t, task.path};
  (void)JoinFacts(&out->run, text);  // a module the analysis cannot read is diagnosed on its counters
  auto rep = diagnose::DiagnoseRun(out->run);
  if (rep.run.kernels.empty()) return NotFound("ncu profiled no kernel");
  // The tuned kernel (by name), else the one with the largest share of the time.
  size_t pick = 0;
  double best_share = -1;
  for (size_t i = 0; i < rep.run.kernels.size(); ++i) {
    const auto& k = rep.run.kernels[i];
    bool named = !kernel_.empty() && k.name().find(kernel_) != std::string::npos;
    double score = k.time_share + (named ? 10 : 0);
    if (score > best_share) {
      best_share = score;
      pick = i;
    }
  }
  const auto& kp = rep.run.kernels[pick];
  search::ProfileSummary s;
  s.kernel = kp.name();
  for (const auto& k : rep.run.kernels) s.kernel_shares[k.name()] += k.time_share;
  if (kp.roofline.valid && kp.roofline.fraction_of_roof > 0) s.roofline_fraction = kp.roofline.fraction_of_roof;
  if (kp.roofline.valid) s.duration_ms = kp.roofline.seconds * 1e3;
  if (pick < rep.diagnoses.size()) {
    const auto& d = rep.diagnoses[pick];
    s.bound = diagnose::ClassName(d.cls);
    for (const auto& f : d.findings) s.findings.push_back(ToFindingView(f));
  }
  s.raw = diagnose::ToJson(rep);
  return s;
}

}  // namespace kiln::app
