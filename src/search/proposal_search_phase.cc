// kiln/search: the search continues from a proposer's best rewrite (kiln optimize --llm, issue 20). After
// the proposals, the fastest one that beat the original on its short timing is verified like a finalist
// (interleaved against the original on fresh inputs, the task's own check, a confirming run). When it
// wins, the proposer analyses its module (its tuned kernel's tunables, as the original's were), and the
// parametric search runs over that space from the proposal's own values with the budget that is left: a
// nested run of the loop whose "original" is the proposal (measure-only, policy strict: the module is
// not the user's). A config that beats the proposal there is then timed against the true original (two
// long runs); it wins only if it passes. A proposal without tunables, or without budget left, is kept as
// it is. The original's own search is then skipped: the run continues from the best. See optimize_run.h.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/hash.h"
#include "search/optimize_run.h"

namespace kiln::search::internal {

namespace {

// The fastest proposal that beat the original on its short timing (0: none).
size_t BestProposal(const std::vector<CandidateRecord>& cands, double original_ms, double accept_gain) {
  size_t best = 0;
  double best_ms = original_ms * (1.0 - accept_gain);
  for (size_t i = 1; i < cands.size(); ++i) {
    const auto& c = cands[i];
    if (c.proposal && c.verdict == "ok" && c.score_ms < best_ms) {
      best = i;
      best_ms = c.score_ms;
    }
  }
  return best;
}

}  // namespace

// What one search measurement costs, from the original's run (as Search() first estimates it).
double OptimizeRun::MeasurementCost() const {
  if (base_.phases.is_object() && base_.phases.contains("timing"))
    return PhaseSum(base_.phases, {"timing", "timing_inputs"}) + o_.verify_trials * PhaseSum(base_.phases, {"inputs"}) +
           0.5;
  return base_.eval_s;
}

Status OptimizeRun::ContinueFromProposal() {
  if (!d_.proposer || o_.dry_run) return Status::Ok();
  const size_t pi = BestProposal(res_.candidates, base_.score_ms, o_.accept_gain);
  if (pi == 0) return Status::Ok();
  KILN_RETURN_IF_ERROR(VerifyFinalists({pi}));
  if (!res_.improved) return Status::Ok();  // rejected: the search runs over the original as usual
  const CandidateRecord prop = res_.candidates[pi];
  const std::string src = SourceOf(pi);
  ProposalSearch ps;
  ps.proposal_id = prop.id;
  ps.origin = prop.origin;
  ps.proposal_speedup = res_.geomean_speedup;
  res_.stop_reason = fmt::format("{} proposal #{} won", prop.origin, prop.id);
  auto analysed = d_.proposer->Analyze(src);
  if (!analysed.ok()) {
    ps.outcome = "kept as is: its module could not be analysed: " + analysed.status().message();
  } else if (analysed->space.empty() || !analysed->renderer) {
    ps.kernel = analysed->kernel;
    ps.outcome = "kept as is: its kernel has no tunables to search";
  } else {
    KILN_RETURN_IF_ERROR(SearchProposal(prop, src, *analysed, &ps));
  }
  Say(fmt::format("kiln: {} proposal #{}: {}", prop.origin, prop.id, ps.outcome));
  res_.proposal_search = std::move(ps);
  return Status::Ok();
}

// The nested search over the proposal's tunables, then the winner's judgement against the original.
Status OptimizeRun::SearchProposal(const CandidateRecord& prop, const std::string& src, const ProposalSpace& space,
                                   ProposalSearch* ps) {
  ps->kernel = space.kernel;
  ps->space = space.space;
  ps->from = ps->to = space.baseline;
  const double t_long = o_.long_cost_factor * std::max(0.1, MeasurementCost());
  // Left for the nested run: what the budget still holds, less the two runs against the original.
  const double left = BudgetEnd() - Elapsed() - 2 * t_long;
  if (left < 3 * t_long + 3 * MeasurementCost()) {
    ps->outcome = fmt::format("kept as is: {:.0f} s of the budget are left, too few to search its tunables",
                              std::max(0.0, BudgetEnd() - Elapsed()));
    return Status::Ok();
  }
  OptimizeInput in;
  in.task = in_.task;
  in.original_source = src;
  in.kernel = space.kernel;
  in.space = space.space;
  in.baseline = space.baseline;
  in.autotuned = space.autotuned;
  in.runtime_valued = space.runtime_valued;
  in.notes = space.notes;
  OptimizeOptions o = o_;
  o.budget_seconds = left;
  o.budget_is_search = false;  // `left` counts from the nested run's start
  o.hard_end_s = o_.hard_end_s > 0 ? std::max(1.0, o_.hard_end_s - Elapsed()) : 0.0;
  o.started_at = Now();
  // A model's code is not the user's; kiln's own rewrites of the user's kernel keep the run's policy.
  o.policy = d_.proposer->trusted() ? o_.policy : exec::Policy::kStrict;
  o.emit_autotune = false;
  o.per_shape_fallback = false;
  o.profile_winner_always = false;
  o.max_evals = o_.max_evals > 0 ? std::max(1, o_.max_evals - res_.measured) : 0;
  o.cases = run_cases_;  // as the original's baseline resolved them (empty: all)
  o.search_cases = search_cases_;
  o.largest_case_only = false;
  o.startup = nlohmann::json::object();
  Deps d{d_.measurer, space.renderer.get()};
  d.progress = d_.progress;  // no profiler (measure-only), no recorder (merged below), no proposer
  Say(fmt::format("kiln: searching the tunables of {} proposal #{} (kernel {}, from {}, {:.0f} s)", prop.origin,
                  prop.id, space.kernel, ConfigKey(space.baseline), left));
  const double at = Elapsed();
  auto sub = Optimize(in, o, d);
  if (!sub.ok()) {
    ps->outcome = "kept as is: the search on it failed: " + sub.status().message();
    return Status::Ok();
  }
  ps->strategy = sub->strategy;
  ps->stop_reason = sub->stop_reason;
  res_.stop_reason += "; the search on it stopped: " + sub->stop_reason;
  ps->measured = sub->measured;
  size_t winner = MergeProposalSearch(prop, *sub, at);
  if (!sub->improved || winner == 0) {
    ps->outcome = "kept as is: " + sub->kept_reason;
    return Status::Ok();
  }
  // The tuned module beat the proposal (verified, confirmed); now against the original, interleaved.
  proposal_sources_.insert(HashHex(sub->best_source));
  if (!d_.proposer->trusted()) strict_sources_.insert(HashHex(sub->best_source));  // a model's code: strict here too
  std::vector<CaseComparison> c1, c2;
  const std::vector<CaseTiming> solo = res_.candidates[winner].cases;  // its own (search) timings
  KILN_ASSIGN_OR_RETURN(std::string why, JudgeLongRun(sub->best_source, &solo, &c1));
  if (why.empty()) {
    KILN_ASSIGN_OR_RETURN(why, JudgeLongRun(sub->best_source, &solo, &c2));
  }
  std::vector<double> sp;
  for (const auto& x : c1) sp.push_back(x.speedup);
  if (why.empty() && !(GeoMean(sp) > ps->proposal_speedup))
    why = fmt::format("{:.3f}x over the original, not above the rewrite's {:.3f}x", GeoMean(sp), ps->proposal_speedup);
  auto& wc = res_.candidates[winner];
  if (!why.empty()) {
    wc.final_outcome = "beat the rewrite; rejected against the original: " + why;
    Step("verify", {{"id", wc.id}, {"outcome", wc.final_outcome}});
    ps->outcome = "kept as is: the tuned module was rejected against the original: " + why;
    return Status::Ok();
  }
  wc.final_outcome = "won";
  sources_[winner] = sub->best_source;
  DeclareWinner(sub->best_config, sub->best_source, c1, c2);
  res_.best_origin = wc.origin;
  Step("verify", {{"id", wc.id}, {"outcome", "won"}, {"geomean_speedup", res_.geomean_speedup}});
  ps->improved = true;
  ps->to = sub->best_config;
  ps->speedup_over_proposal = sub->geomean_speedup;
  ps->outcome = fmt::format("tuned by the search ({}): {:.3f}x over the rewrite, {:.3f}x over the original",
                            sub->strategy, sub->geomean_speedup, res_.geomean_speedup);
  return Status::Ok();
}

// The nested run's candidates join this run's (renumbered; its first, the proposal measured again as its
// baseline, is left out), with its counts and notes. -> the index of its winner here (0: none).
size_t OptimizeRun::MergeProposalSearch(const CandidateRecord& prop, const OptimizeResult& sub, double at) {
  size_t winner = 0;
  const std::string on = fmt::format(" on {} #{}", prop.origin, prop.id);
  for (size_t k = 1; k < sub.candidates.size(); ++k) {
    CandidateRecord c = sub.candidates[k];
    c.id = next_id_++;
    c.origin += on;
    c.on_proposal = prop.id;
    c.at_s += at;
    if (c.final_outcome == "won") {
      winner = res_.candidates.size();
      c.final_outcome = "beat the rewrite";
    }
    Step("candidate", CandJson(c));
    res_.candidates.push_back(std::move(c));
  }
  res_.measured += sub.measured;
  res_.compiled += sub.compiled;
  res_.pruned += sub.pruned;
  res_.pruned_static += sub.pruned_static;
  res_.failed += sub.failed;
  for (const auto& n : sub.notes)  // (the same note as the original's, e.g. a skipped tunable, once)
    if (std::find(res_.notes.begin(), res_.notes.end(), n) == res_.notes.end())
      res_.notes.push_back(fmt::format("search on {} #{}: {}", prop.origin, prop.id, n));
  return winner;
}

}  // namespace kiln::search::internal

namespace kiln::search {

nlohmann::json ProposalSearch::ToJson() const {
  return {{"proposal_id", proposal_id},
          {"origin", origin},
          {"proposal_speedup", proposal_speedup},
          {"kernel", kernel},
          {"space", space.ToJson()},
          {"from_config", ConfigToJson(from)},
          {"best_config", ConfigToJson(to)},
          {"strategy", strategy},
          {"improved", improved},
          {"speedup_over_proposal", speedup_over_proposal},
          {"outcome", outcome},
          {"stop_reason", stop_reason},
          {"measured", measured}};
}

}  // namespace kiln::search
