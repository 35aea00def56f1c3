// kiln/search: the proposer's phase (kiln optimize --llm): whole rewritten modules from outside the
// parametric space, after the original's profile and before the search. Each proposal is measured like a
// search candidate (a short timing with its one-trial check; under --dry-run a correctness check alone),
// under policy strict when the code is not the user's (a model's; kiln's own rewrites of the user's kernel
// run under the run's policy, as the search's configs do), and recorded with the proposer's name as its origin;
// a proposal faster than the original joins the finalists and is verified like any other. See
// optimize_run.h.
#include <cmath>

#include <fmt/format.h>

#include "common/hash.h"
#include "search/optimize_run.h"

namespace kiln::search::internal {

Status OptimizeRun::ProposeRewrites() {
  if (!d_.proposer) return Status::Ok();
  Show("propose");
  ProposalContext ctx;
  ctx.source = in_.original_source;
  ctx.kernel = in_.kernel;
  ctx.profile = res_.profile_before;
  for (const auto& c : base_.cases) ctx.original_case_ms.push_back({c.name, c.median_ms});
  const std::string origin = d_.proposer->name();
  BestSoFar best;  // the fastest correct candidate so far, told from the second round on
  best.what = "the original";
  if (!o_.dry_run) best.score_ms = base_.score_ms;
  best.case_ms = ctx.original_case_ms;
  if (ctx.profile) best.findings = ctx.profile->findings;
  std::string best_source;  // a proposal's, when one is the best
  for (ctx.round = 0; ctx.round < d_.proposer->rounds(); ++ctx.round) {
    if (!o_.dry_run && Elapsed() >= BudgetEnd() - o_.budget_seconds * o_.reserve_fraction) {
      res_.notes.push_back(fmt::format("{}: the budget ended before round {}", origin, ctx.round + 1));
      break;
    }
    auto props = d_.proposer->Propose(ctx);
    if (!props.ok()) {
      res_.notes.push_back(fmt::format("{}: no proposals: {}", origin, props.status().message()));
      break;
    }
    std::vector<ProposalOutcome> outcomes;
    for (const auto& p : *props) {
      ProposalOutcome out;
      out.source = p.source;
      out.original_score_ms = base_.score_ms;
      CandidateRecord rec;
      rec.id = next_id_++;
      rec.config = in_.baseline;  // a whole module: the original's config stands for it in the records
      rec.origin = origin;
      rec.proposal = true;
      rec.at_s = Elapsed();
      rec.message = p.note;
      if (p.source.empty()) {
        rec.verdict = out.verdict = "no_code";
        rec.message = p.note.empty() ? "the answer had no code" : p.note;
      } else {
        rec.source_hash = HashHex(p.source);
        proposal_sources_.insert(rec.source_hash);
        if (!d_.proposer->trusted()) strict_sources_.insert(rec.source_hash);
        if (o_.dry_run) {
          KILN_ASSIGN_OR_RETURN(out.result, Measure(MakeRequest(p.source, exec::Mode::kCheck, NextSeed(),
                                                                o_.verify_trials, {}, run_cases_)));
          rec.verdict = exec::VerdictName(out.result.verdict);
          rec.message = out.result.message;
        } else {
          KILN_ASSIGN_OR_RETURN(out.result, TimeShort(p.source, &rec));
          out.score_ms = std::isfinite(rec.score_ms) ? rec.score_ms : -1;
        }
        out.verdict = rec.verdict;
        sources_[res_.candidates.size()] = p.source;
      }
      if (rec.verdict != "ok") ++res_.failed, ++ps_.failed;
      if (rec.verdict == "ok" && !o_.dry_run && std::isfinite(rec.score_ms) &&
          rec.score_ms < best.score_ms * (1.0 - o_.accept_gain)) {
        best.what = fmt::format("proposal #{} ({})", rec.id, p.note);
        best.is_original = false;
        best.score_ms = rec.score_ms;
        best.case_ms.clear();
        for (const auto& c : rec.cases) best.case_ms.push_back({c.name, c.median_ms});
        best.findings = ctx.profile ? ctx.profile->findings : std::vector<FindingView>{};
        best.findings_of_original = true;
        best_source = p.source;
      }
      Step("candidate", CandJson(rec));
      Say(fmt::format("kiln: {} proposal {}: {}{}", origin, rec.id, rec.verdict,
                      out.score_ms > 0 ? fmt::format(" ({:.2f}x)", base_.score_ms / out.score_ms) : ""));
      res_.candidates.push_back(std::move(rec));
      outcomes.push_back(std::move(out));
    }
    ctx.previous = std::move(outcomes);
    if (ctx.round + 1 < d_.proposer->rounds()) ProfileBestProposal(&best, &best_source);
    ctx.best = best;
  }
  return Status::Ok();
}

// The best proposal so far is profiled for the next round's feedback when profiling works here and the
// budget has room for it twice over before the reserve (else the original's findings stand for it).
void OptimizeRun::ProfileBestProposal(BestSoFar* best, std::string* source) {
  if (best->is_original || source->empty() || !d_.profiler || res_.mode != "profiled") return;
  if (Elapsed() + 2 * profile_s_ >= BudgetEnd() - o_.budget_seconds * o_.reserve_fraction) return;
  Show("profile");
  auto p = ProfileSource(*source);
  source->clear();  // profiled once
  if (!p.ok()) {
    res_.notes.push_back("profiling the best proposal failed: " + p.status().message());
    return;
  }
  best->findings = p->findings;
  best->findings_of_original = false;
  Step("profile_proposal", p->ToJson());
}

}  // namespace kiln::search::internal
