#include "app/generate_verifier.h"

#include <algorithm>

#include "app/eval_internal.h"
#include "app/ncu_profiler.h"
#include "app/runner_factory.h"
#include "profile/device.h"

namespace kiln::app {

exec::EvalRequest CandidateRequest(const exec::EvalRequest& base, const task::TaskSpec& task,
                                   const std::string& source) {
  exec::EvalRequest r = base;
  r.task = task;
  r.candidate_name = "candidate.py";
  r.candidate_source = eval_internal::WorkerModule(source, r);
  return r;
}

std::vector<gen::Finding> TopFindings(const std::vector<search::FindingView>& findings, size_t n) {
  auto rank = [](const std::string& s) { return s == "major" ? 0 : s == "minor" ? 1 : 2; };
  std::vector<search::FindingView> sorted = findings;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const auto& a, const auto& b) { return rank(a.severity) < rank(b.severity); });
  std::vector<gen::Finding> out;
  for (const auto& f : sorted) {
    if (out.size() == n) break;
    out.push_back({f.rule, f.severity, f.message});
  }
  return out;
}

EvalVerifier::EvalVerifier(std::unique_ptr<exec::Runner> runner, store::Store* store, exec::EvalRequest base)
    : runner_(std::move(runner)), evaluator_(runner_.get(), store, store != nullptr), base_(std::move(base)) {}

EvalVerifier::~EvalVerifier() = default;

Result<exec::EvalResult> EvalVerifier::Verify(const task::TaskSpec& task, const std::string& source) {
  return evaluator_.Evaluate(CandidateRequest(base_, task, source));
}

std::optional<std::string> EvalVerifier::EnableProfiler(const std::string& python) {
  profile::JsonDeviceStore ds;
  std::optional<profile::DeviceRecord> dev;
  if (auto d = profile::CharacterizeDevice(*Unrecorded(runner_.get()), {}, ds); d.ok()) dev = *d;
  auto p = std::make_unique<NcuProfiler>("", dev, python);
  if (Status s = p->Available(); !s.ok()) return "no diagnosis of slow answers: " + s.message();
  profiler_ = std::move(p);
  return std::nullopt;
}

std::vector<gen::Finding> EvalVerifier::Diagnose(const task::TaskSpec& task, const std::string& source,
                                                 const exec::EvalResult& r) {
  if (!profiler_) return {};
  auto s = profiler_->Profile(task, CandidateRequest(base_, task, source).candidate_source, "");
  if (!s.ok()) return {};  // the feedback then carries the timings alone
  return TopFindings(s->findings, 3);
}

}  // namespace kiln::app
