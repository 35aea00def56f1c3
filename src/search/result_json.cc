// kiln/search: the loop's result as JSON, and the small measurement helpers its phases share.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "exec/kernel_facts.h"
#include "search/optimize_run.h"

namespace kiln::search {

namespace internal {

// Seconds the worker reported for the named phases of a request (phases_s).
double PhaseSum(const nlohmann::json& phases, std::initializer_list<const char*> names) {
  double t = 0;
  for (const char* n : names)
    if (phases.is_object() && phases.contains(n) && phases[n].is_number()) t += phases[n].get<double>();
  return t;
}

// Median of one case (0 when it was not timed).
double CaseMs(const std::vector<CaseTiming>& cases, const std::string& name) {
  for (const auto& t : cases)
    if (t.name == name && t.median_ms > 0) return t.median_ms;
  return 0;
}

std::vector<CaseTiming> CaseTimes(const exec::EvalResult& r) {
  std::vector<CaseTiming> out;
  for (const auto& cs : r.cases) {
    CaseTiming t;
    t.name = cs.name;
    t.method = cs.timing_method;
    if (cs.candidate_ms) {
      t.median_ms = cs.candidate_ms->median;
      t.p20_ms = cs.candidate_ms->p20;
      t.p80_ms = cs.candidate_ms->p80;
    }
    out.push_back(t);
  }
  return out;
}

// Geometric mean of the case medians over `names` (all cases when empty); +inf when not ok or a
// case has no time.
double Score(const exec::EvalResult& r, const std::vector<std::string>& names) {
  if (r.verdict != exec::Verdict::kOk) return kInf;
  std::vector<double> v;
  for (const auto& cs : r.cases) {
    if (!names.empty() && std::find(names.begin(), names.end(), cs.name) == names.end()) continue;
    if (!cs.passed || !cs.candidate_ms || !(cs.candidate_ms->median > 0)) return kInf;
    v.push_back(cs.candidate_ms->median);
  }
  if (v.empty()) return kInf;
  return GeoMean(v);
}

nlohmann::json CandJson(const CandidateRecord& c) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : c.kernels) kernels.push_back(exec::ToJson(k));
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& t : c.cases) {
    nlohmann::json j = {{"name", t.name}};
    if (std::isfinite(t.median_ms)) j["median_ms"] = t.median_ms;
    if (std::isfinite(t.p20_ms)) j["p20_ms"] = t.p20_ms;
    if (!t.method.empty()) j["method"] = t.method;
    if (std::isfinite(t.p80_ms)) j["p80_ms"] = t.p80_ms;
    cases.push_back(j);
  }
  nlohmann::json j = {{"id", c.id},
                      {"config", ConfigToJson(c.config)},
                      {"proposal", c.proposal},
                      {"origin", c.origin},
                      {"source_hash", c.source_hash},
                      {"verdict", c.verdict},
                      {"message", c.message},
                      {"cases", cases},
                      {"at_s", c.at_s},
                      {"eval_s", c.eval_s},
                      {"finalist", c.finalist},
                      {"final_outcome", c.final_outcome},
                      {"kernels", kernels}};
  if (!c.phases.empty()) j["phases_s"] = c.phases;
  if (c.on_proposal >= 0) j["on_proposal"] = c.on_proposal;
  j["score_ms"] = std::isfinite(c.score_ms) ? nlohmann::json(c.score_ms) : nlohmann::json(nullptr);
  j["rung1_ms"] = std::isfinite(c.rung1_ms) ? nlohmann::json(c.rung1_ms) : nlohmann::json(nullptr);
  return j;
}

// Per-case comparison of a finalist's long run against the original, which that request timed
// interleaved with it (its timing baseline). A case without that timing cannot win.
std::vector<CaseComparison> Compare(const exec::EvalResult& cand) {
  std::vector<CaseComparison> out;
  for (const auto& cc : cand.cases) {
    CaseComparison cmp;
    cmp.name = cc.name;
    cmp.passed = cc.passed;
    cmp.max_abs_err = cc.max_abs_err.value_or(0);
    if (cc.candidate_ms) cmp.best_ms = cc.candidate_ms->median;
    if (cc.reference_is_baseline && cc.speedup && cc.reference_ms && cmp.best_ms > 0) {
      cmp.baseline_ms = cc.reference_ms->median;
      cmp.speedup = *cc.speedup;
      cmp.spread_lo = cc.speedup_spread ? cc.speedup_spread->first : cmp.speedup;
      cmp.spread_hi = cc.speedup_spread ? cc.speedup_spread->second : cmp.speedup;
    } else {
      cmp.speedup = 0;  // no time against the original: cannot win
      cmp.passed = false;
    }
    out.push_back(cmp);
  }
  return out;
}

}  // namespace internal

using internal::CandJson;

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double GeoMean(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v) {
    if (!(x > 0) || !std::isfinite(x)) continue;
    s += std::log(x);
    ++n;
  }
  return n ? std::exp(s / n) : std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json ProfileSummary::ToJson() const {
  nlohmann::json f = nlohmann::json::array();
  for (const auto& x : findings)
    f.push_back({{"rule", x.rule},
                 {"severity", x.severity},
                 {"message", x.message},
                 {"moves", x.moves},
                 {"evidence", x.evidence}});
  nlohmann::json j = {{"kernel", kernel}, {"bound", bound}, {"findings", f}};
  j["roofline_fraction"] = roofline_fraction >= 0 ? nlohmann::json(roofline_fraction) : nlohmann::json(nullptr);
  j["duration_ms"] = duration_ms >= 0 ? nlohmann::json(duration_ms) : nlohmann::json(nullptr);
  j["kernel_shares"] = kernel_shares;
  return j;
}

nlohmann::json OptimizeResult::ToJson() const {
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : cases)
    cs.push_back({{"name", c.name},
                  {"baseline_ms", c.baseline_ms},
                  {"best_ms", c.best_ms},
                  {"speedup", c.speedup},
                  {"spread", {c.spread_lo, c.spread_hi}},
                  {"passed", c.passed},
                  {"max_abs_err", c.max_abs_err}});
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : candidates) cands.push_back(CandJson(c));
  nlohmann::json j = {{"schema_version", 1},
                      {"task", task},
                      {"kernel", kernel},
                      {"strategy", strategy},
                      {"mode", mode},
                      {"mode_note", mode_note},
                      {"device", device},
                      {"device_uuid", device_uuid},
                      {"versions", versions},
                      {"space", space.ToJson()},
                      {"baseline_config", ConfigToJson(baseline_config)},
                      {"best_config", ConfigToJson(best_config)},
                      {"improved", improved},
                      {"kept_reason", kept_reason},
                      {"geomean_speedup", geomean_speedup},
                      {"best_origin", best_origin},
                      {"best_is_proposal", best_is_proposal},
                      {"cases", cs},
                      {"candidates", cands},
                      {"measured", measured},
                      {"compiled", compiled},
                      {"pruned", pruned},
                      {"pruned_static", pruned_static},
                      {"failed", failed},
                      {"stop_reason", stop_reason},
                      {"wall_s", wall_s},
                      {"notes", notes},
                      {"run_id", run_id}};
  j["profile_before"] = profile_before ? profile_before->ToJson() : nlohmann::json(nullptr);
  j["profile_after"] = profile_after ? profile_after->ToJson() : nlohmann::json(nullptr);
  j["roofline_before"] = roofline_before >= 0 ? nlohmann::json(roofline_before) : nlohmann::json(nullptr);
  j["roofline_after"] = roofline_after >= 0 ? nlohmann::json(roofline_after) : nlohmann::json(nullptr);
  j["roofline_after_estimated"] = roofline_after_estimated;
  j["reserve_s"] = reserve_s;
  j["startup_s"] = startup;
  j["timings_s"] = timings;
  j["cut_slow"] = cut_slow;
  j["best_is_autotune"] = best_is_autotune;
  j["proposal_search"] = proposal_search ? proposal_search->ToJson() : nlohmann::json(nullptr);
  return j;
}

}  // namespace kiln::search
