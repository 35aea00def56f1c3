// kiln/search: the search phase (rounds of proposals: prune, render, compile in the background, time
// briefly) and the dry run (correctness checks only). See optimize_run.h.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/hash.h"
#include "search/optimize_run.h"

namespace kiln::search::internal {

bool IsTaskError(const Status& s) {
  return s.code() == Code::kInvalidArgument && s.message().rfind("task error: ", 0) == 0;
}

// Triton's interpreter ignores the options only the compiler reads (num_warps, num_stages, ...): a
// config that differs from one already checked only in those is the same program there. The dry run
// checks a few distinct programs (the original's check covers its own launch-option neighbours).
Status OptimizeRun::DryRun() {
  auto program_key = [this](const Config& cfg) {
    Config s;
    for (const auto& [k, v] : cfg)
      if (const Param* p = in_.space.Find(k); !p || !p->launch_option) s[k] = v;
    return ConfigKey(s);
  };
  const size_t want = static_cast<size_t>(std::max(1, o_.dry_run_candidates));
  std::set<std::string> seen = {program_key(in_.baseline)};
  std::vector<Config> props;
  size_t same_program = 0;
  for (const auto& cfg : strategy_->Propose(std::max<size_t>(64, want * 16))) {
    if (props.size() == want) break;
    if (seen.insert(program_key(cfg)).second)
      props.push_back(cfg);
    else
      ++same_program;
  }
  if (props.empty())
    res_.notes.push_back(
        "dry run: every proposed config differs from the original only in launch options "
        "(num_warps, num_stages, ...) that Triton's interpreter ignores; the original's check "
        "stands for them");
  else if (same_program)
    res_.notes.push_back(
        fmt::format("dry run: {} proposed configs differ from a checked one only in launch options "
                    "that Triton's interpreter ignores; not checked again",
                    same_program));
  size_t checked = 0;
  for (const auto& cfg : props) {
    // The budget holds here too: under the interpreter one check can take minutes.
    if (Elapsed() >= BudgetEnd()) {
      res_.notes.push_back(fmt::format("dry run: the {:.0f} s budget ended after {} of {} candidates",
                                       o_.budget_seconds, checked, props.size()));
      break;
    }
    ++checked;
    CandidateRecord cr;
    cr.id = next_id_++;
    cr.config = cfg;
    cr.origin = res_.strategy;
    cr.at_s = Elapsed();
    auto src = d_.renderer->Render(cfg);
    if (!src.ok()) {
      cr.verdict = "render_error";
      cr.message = src.status().message();
    } else {
      cr.source_hash = HashHex(*src);
      exec::EvalRequest rq = MakeRequest(*src, exec::Mode::kCheck, NextSeed(), o_.verify_trials, {}, run_cases_);
      rq.timeout_s = CandidateTimeout();
      double sent_s = rq.timeout_s;
      KILN_ASSIGN_OR_RETURN(exec::EvalResult r, Measure(rq, &sent_s));
      cr.verdict = exec::VerdictName(r.verdict);
      cr.message = r.message;
      if (CutAsSlow(rq.timeout_s, sent_s, r, &cr))
        ++res_.pruned;
      else if (r.verdict != exec::Verdict::kOk)
        ++res_.failed;
    }
    Step("dry_run_check", CandJson(cr));
    Say(fmt::format("kiln: dry-run {}: {}", ConfigKey(cfg), cr.verdict));
    res_.candidates.push_back(cr);
    ++ps_.tried;
    Show("dry-run");
  }
  res_.kept_reason = "dry run: candidates were checked for correctness only; nothing can be timed without a GPU";
  res_.stop_reason = "dry-run";
  finish_status_ = "dry-run";
  finished_ = true;
  return Status::Ok();
}

// The search ends when what follows it still fits the budget: three long verification runs (the
// original, a finalist, its confirmation), each costed at long_cost_factor x one measurement. A
// measurement is first costed from the original's run as the worker reported it (its inputs and
// timing: its check also paid the first compile), or its whole run when no phases came back; then
// from the median of the search's own measurements. The winner's profile runs only when the budget
// still has room for it at that point.
//
// With --budget-scope search the budget is the search's alone: it ends BudgetEnd(), verification follows
// outside it. Either way verification must still fit before the hard end.
double OptimizeRun::LongRunsSeconds() const { return 3.0 * o_.long_cost_factor * std::max(0.1, t_measure_) + 1.0; }

void OptimizeRun::UpdateReserve() {
  const double long_runs = LongRunsSeconds();
  res_.reserve_s = o_.dry_run || o_.budget_is_search ? 0.0 : std::max(o_.budget_seconds * o_.reserve_fraction, long_runs);
  search_end_ = std::max(BudgetEnd() - res_.reserve_s, search_floor_);
  search_ends_at_hard_end_ = false;
  if (o_.hard_end_s > 0 && !o_.dry_run && o_.hard_end_s - o_.runner_grace_s - long_runs < search_end_) {
    search_end_ = o_.hard_end_s - o_.runner_grace_s - long_runs;
    search_ends_at_hard_end_ = true;
  }
}

double OptimizeRun::CandidateTimeout() const {
  if (o_.slow_factor <= 0) return o_.timeout_s;
  return std::min(o_.timeout_s, std::max(o_.slow_floor_s, o_.slow_factor * base_.eval_s));
}

// A measurement the worker timed out at the candidate's own deadline (not the run's timeout): the candidate
// is far slower than the original (or its compile is), so it is pruned, not waited for.
bool OptimizeRun::CutAsSlow(double asked_s, double sent_s, const exec::EvalResult& r, CandidateRecord* rec) {
  if (r.verdict != exec::Verdict::kTimeout || asked_s >= o_.timeout_s) return false;
  // What set the limit: the candidate's own deadline, the search budget's end, or the run's hard end
  // (the timeout sent was cut below the one asked).
  const double sent = std::min(asked_s, sent_s);
  std::string why;
  if (sent < asked_s - 1e-9)
    why = "the run's hard end";
  else if (asked_s < CandidateTimeout() - 1e-9)
    why = "the search budget's end";
  else
    why = fmt::format("{:g}x the original's measurement of {:.1f} s, --slow-factor", o_.slow_factor, base_.eval_s);
  rec->verdict = "pruned";
  rec->message = fmt::format("too slow: no answer within {:.1f} s ({}); not waited for", sent, why);
  rec->score_ms = kInf;
  ++res_.cut_slow;
  return true;
}

Status OptimizeRun::Search() {
  t_measure_ = base_.eval_s;
  if (base_.phases.is_object() && base_.phases.contains("timing"))
    t_measure_ = PhaseSum(base_.phases, {"timing", "timing_inputs"}) +
                 o_.verify_trials * PhaseSum(base_.phases, {"inputs"}) + 0.5;
  // A budget spent before the search (a slow original, a slow profile) still leaves the search a
  // minimal window.
  search_floor_ = Elapsed() + o_.min_search_fraction * o_.budget_seconds;
  UpdateReserve();
  best_score_ = start_score_;
  best_config_ = in_.baseline;
  ps_.best_speedup = 1.0;
  ps_.best_config = ConfigKey(in_.baseline);
  base_profile_case_ms_ = CaseMs(base_.cases, profile_case_);
  best_profile_case_ms_ = base_profile_case_ms_;
  int rounds_without_gain = 0;
  while (true) {
    if (OverBudget()) {
      res_.stop_reason = search_ends_at_hard_end_ ? "hard end" : "budget";
      break;
    }
    if (EvalsLeft() <= 0) {
      res_.stop_reason = "max-evals";
      break;
    }
    auto props = strategy_->Propose(static_cast<size_t>(std::max(1, o_.batch)));
    if (props.empty()) {
      res_.stop_reason = "converged";
      break;
    }
    const double round_start_best = best_score_;
    const size_t round_start_candidates = res_.candidates.size();
    bool stopped = false;
    KILN_RETURN_IF_ERROR(SearchRound(props, &stopped));
    if (stopped) {
      res_.stop_reason = !OverBudget() ? "max-evals" : search_ends_at_hard_end_ ? "hard end" : "budget";
      break;
    }
    // A round that timed nothing (every config pruned or failed: shared memory, compile errors) says
    // nothing about convergence and does not count against the patience (on an H200, context_attn_llama's
    // search stopped after 8 of its 20 s: 6 of its 10 configs were over the shared-memory limit).
    if (best_score_ < round_start_best * (1.0 - o_.min_round_gain))
      rounds_without_gain = 0;
    else if (std::any_of(res_.candidates.begin() + static_cast<std::ptrdiff_t>(round_start_candidates),
                         res_.candidates.end(), [](const CandidateRecord& c) { return std::isfinite(c.score_ms); }))
      ++rounds_without_gain;
    if (rounds_without_gain >= o_.patience) {
      res_.stop_reason = fmt::format("no gain of {:.0f}% in {} rounds", 100 * o_.min_round_gain, o_.patience);
      break;
    }
    // The roofline fraction is the profiled case's: scale it by that case's own speedup (other cases'
    // gains say nothing about it); no estimate when the profiled case was not timed.
    if (res_.roofline_before > 0 && base_profile_case_ms_ > 0 && best_profile_case_ms_ > 0 &&
        res_.roofline_before * base_profile_case_ms_ / best_profile_case_ms_ >= o_.roofline_stop) {
      res_.stop_reason = "estimated at roofline";
      break;
    }
  }
  res_.pruned_static = static_cast<int>(static_pruned_.size());
  if (!static_pruned_.empty())
    res_.notes.push_back(fmt::format("{} configs pruned before compiling, e.g. {}: {}", static_pruned_.size(),
                                     static_pruned_.begin()->first, static_pruned_.begin()->second));
  if (res_.cut_slow)
    res_.notes.push_back(fmt::format("{} candidate measurement(s) cut at their deadline ({:.1f} s: {:g}x the original's "
                                     "measurement, --slow-factor) and pruned as too slow",
                                     res_.cut_slow, CandidateTimeout(), o_.slow_factor));
  Say(fmt::format(
      "kiln: search stopped ({}) after {} measured, {} pruned, {} failed; best {} ({:.3f}x on short timings)",
      res_.stop_reason, measured_search_, res_.pruned, res_.failed, ConfigKey(best_config_),
      base_.score_ms / best_score_));
  return Status::Ok();
}

// One round: render and prune the proposals, compile them in the background (when compile jobs are
// configured), then time each in order as its compile finishes.
Status OptimizeRun::SearchRound(const std::vector<Config>& proposals, bool* stopped) {
  std::vector<exec::EvalRequest> compiles;
  std::vector<Pending> pending = RenderRound(proposals, &compiles);
  std::unique_ptr<CompileBatch> batch;
  if (!compiles.empty()) batch = d_.measurer->StartCompiles(std::move(compiles), compile_jobs_);
  for (auto& p : pending) {
    KILN_RETURN_IF_ERROR(MeasurePending(&p, batch.get(), stopped));
    if (p.rec.verdict == "skipped") {
      res_.candidates.push_back(p.rec);
      continue;
    }
    ObserveCandidate(std::move(p.rec));
  }
  return Status::Ok();
}

// Render and prune before compiling.
std::vector<OptimizeRun::Pending> OptimizeRun::RenderRound(const std::vector<Config>& proposals,
                                                           std::vector<exec::EvalRequest>* compiles) {
  std::vector<Pending> pending;
  for (const auto& cfg : proposals) {
    Pending p;
    p.rec.id = next_id_++;
    p.rec.config = cfg;
    p.rec.origin = strategy_->name();
    p.rec.at_s = Elapsed();
    if (auto why_not = PruneBeforeCompile(in_.space, cfg, prune_)) {
      p.rec.verdict = "pruned";
      p.rec.message = *why_not;
    } else if (auto src = d_.renderer->Render(cfg); !src.ok()) {
      p.rec.verdict = "render_error";
      p.rec.message = src.status().message();
    } else {
      p.src = *src;
      p.rec.source_hash = HashHex(p.src);
      if (compile_jobs_ > 0 && !compiles_off_) {
        p.compile_index = static_cast<int>(compiles->size());
        compiles->push_back(MakeRequest(p.src, exec::Mode::kCompile, 0, 1, {}, search_cases_));
        compiles->back().timeout_s = CandidateTimeout();  // (compiles do not pass Measure: the hard end here)
        if (o_.hard_end_s > 0)
          compiles->back().timeout_s =
              std::max(1.0, std::min(compiles->back().timeout_s, o_.hard_end_s - Elapsed() - o_.runner_grace_s));
        p.compile_timeout_s = compiles->back().timeout_s;
      }
    }
    pending.push_back(std::move(p));
  }
  return pending;
}

// A compile's outcome: its compile facts, a compile failure (learned from when it is out of resources), or
// pruned after compiling (spills).
void OptimizeRun::HandleCompiled(const exec::EvalResult& cr, Pending* p) {
  CandidateRecord& rec = p->rec;
  ++res_.compiled;
  rec.kernels = cr.kernels;
  if (cr.verdict != exec::Verdict::kOk) {
    rec.verdict = exec::VerdictName(cr.verdict);
    rec.message = cr.message;
    // (a compile does not pass Measure: RenderRound cut its timeout at the hard end)
    if (CutAsSlow(CandidateTimeout(), p->compile_timeout_s, cr, &rec)) rec.message = "compile " + rec.message;
    if (IsResourceFailure(cr.message)) prune_.out_of_resources.push_back(rec.config);  // learned: its supersets
  } else if (auto why_not = PruneAfterCompile(cr.kernels, prune_)) {
    rec.verdict = "pruned";
    rec.message = *why_not;
  }
}

// One pending candidate: its compile's outcome (pruned after compiling: spills), then its short timing.
Status OptimizeRun::MeasurePending(Pending* p, CompileBatch* batch, bool* stopped) {
  CandidateRecord& rec = p->rec;
  if (rec.verdict.empty() && (*stopped || OverBudget() || EvalsLeft() <= 0)) {
    // Not measured: the budget ran out mid-round. Not observed as a failure.
    rec.verdict = "skipped";
    rec.message = "budget reached before it was measured";
    *stopped = true;
    return Status::Ok();
  }
  if (rec.verdict.empty() && p->compile_index >= 0 && batch) {
    auto compiled = batch->Wait(static_cast<size_t>(p->compile_index));
    if (!compiled.ok() && !IsTaskError(compiled.status()))
      return Status(compiled.status().code(), "the compile workers failed: " + compiled.status().message());
    if (compiled.ok()) {
      HandleCompiled(*compiled, p);
    } else if (!compiles_off_) {
      // The task's code failed in a compile worker (its harness building the search's inputs ran out of
      // memory beside the measuring worker: layernorm_fwd_triton at its largest sizes). The measuring
      // worker built the same inputs for the original, so the candidate is measured without a compile
      // ahead, and later rounds compile in their measurements only.
      compiles_off_ = true;
      res_.notes.push_back("compile workers turned off: one could not build the search's inputs (" +
                           compiled.status().message().substr(0, 300) +
                           "); candidates compile in their own measurement from here on");
      Say("kiln: " + res_.notes.back());
    }
  }
  if (!rec.verdict.empty()) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(exec::EvalResult r, TimeShort(p->src, &rec));
  ++measured_search_;
  if (r.verdict == exec::Verdict::kCompileError && IsResourceFailure(r.message))
    prune_.out_of_resources.push_back(rec.config);
  cand_eval_s_.push_back(rec.eval_s);
  if (cand_eval_s_.size() >= 3) {
    std::vector<double> v = cand_eval_s_;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    t_measure_ = v[v.size() / 2];
    UpdateReserve();
  }
  if (r.verdict == exec::Verdict::kOk) {
    if (auto why_not = PruneAfterCompile(r.kernels, prune_)) {
      rec.verdict = "pruned";
      rec.message = *why_not;
      rec.score_ms = kInf;
    }
  }
  return Status::Ok();
}

// Counts the candidate, tells the strategy, tracks the best, records it.
void OptimizeRun::ObserveCandidate(CandidateRecord rec) {
  if (rec.verdict == "pruned")
    ++res_.pruned, ++ps_.pruned;
  else if (rec.verdict != "ok")
    ++res_.failed, ++ps_.failed;
  else
    ++ps_.tried;
  strategy_->Observe(rec.config, rec.score_ms);
  if (rec.score_ms < best_score_) {
    best_score_ = rec.score_ms;
    best_config_ = rec.config;
    best_profile_case_ms_ = CaseMs(rec.cases, profile_case_);
    ps_.best_speedup = base_.score_ms / best_score_;
    ps_.best_config = ConfigKey(best_config_);
  }
  Step("candidate", CandJson(rec));
  res_.candidates.push_back(std::move(rec));
  Show("search");
}

}  // namespace kiln::search::internal
