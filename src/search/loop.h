// kiln/search: the tuning loop behind `kiln optimize`.
//
//   analyze (caller, app::PrepareInput: the Space and baseline config come from the kernel's tunables)
//   -> measure the original (short timing; its case names, times and compile facts)
//   -> profile + diagnose it when a Profiler is available (else measure-only, said in the result)
//   -> search: the strategy proposes configs; each is pruned before compiling (shared memory,
//      accumulator registers), rendered to source, compiled in the background (Measurer::StartCompiles,
//      app: exec::EvalPool over the compile workers) in parallel (mode
//      `compile`) while the GPU times the previous ones, pruned after compiling (spills), then
//      timed briefly (rung 0, with a one-trial correctness check)
//   -> successive halving: the best ones are re-timed longer (rung 1) down to the finalists
//   -> verification: each finalist, best first, is timed interleaved against the reference on
//      fresh inputs (new seed, all cases, `verify_trials` trials), side by side with the original;
//      it wins only when every case passes, the geometric-mean speedup over the original is at
//      least `min_speedup` and no case is slower than 1 - case_slack or slower in every interleaved
//      round (the spread of its per-round ratios below 1); a second run on other fresh
//      inputs must confirm it. When no finalist wins, the original is kept.
//
// Stops: budget (wall seconds: the search's own with budget_is_search, else from the start with a share
// reserved for verification), the hard end (the whole run), max evaluations,
// the strategy converged, `patience` rounds without a gain of at least `min_round_gain`, or the
// estimated roofline fraction reaching `roofline_stop` (the baseline's ncu fraction scaled by the
// time ratio, valid because the work does not change).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "exec/kernel_facts.h"
#include "exec/result.h"
#include "search/interfaces.h"
#include "search/prune.h"
#include "search/space.h"
#include "task/task.h"

namespace kiln::search {

// Seconds on the steady clock: the loop's clock when OptimizeOptions::clock is not set.
double SteadySeconds();

struct OptimizeOptions {
  std::string strategy = "auto";  // --strategy rules|coordinate|bayes|auto
  double budget_seconds = 60;     // --budget-seconds (KILN_BUDGET_SECONDS)
  // --budget-scope: false ("run"): the budget counts from the command's start and the search ends where
  // verification still fits it; true ("search", the command's default): the budget is the search's own
  // window, from its start (after the worker start, the original's baseline and profile) to the start of
  // verification, which are counted apart (OptimizeResult::timings).
  bool budget_is_search = false;
  // --hard-end-seconds: the whole run ends by then (seconds from the command's start; 0: no hard end).
  // Every request's timeout is cut to what is left (less the runner's grace); a request that cannot start
  // before it ends the run: the original kept (or a winner already verified), with a note.
  double hard_end_s = 0;
  double runner_grace_s = 10;  // what the runner adds to a request's timeout before it kills the worker
  // --slow-factor: a search candidate's measurement (its compile, its short timing, a halving re-timing) gets
  // at most slow_factor x the original's baseline measurement (at least slow_floor_s) and is pruned as too
  // slow when it takes longer, not waited for (0: only timeout_s).
  double slow_factor = 5;
  double slow_floor_s = 2;
  int max_evals = 0;              // --max-evals: timed measurements (rung 0 + later rungs); 0 = none
  int patience = 2;               // --patience: rounds without a >= min_round_gain gain
  double min_round_gain = 0.01;
  double accept_gain = 0.001;  // coordinate/rules move threshold
  double roofline_stop = 0.95;
  double min_speedup = 1.01;  // --min-speedup: a winner's geometric-mean speedup floor
  double case_slack = 0.02;   // no case may be slower than 1 - case_slack
  // A case slower in every interleaved round counts as slower only below 1 - tie_band: the original's own
  // config, rendered again, measured 0.999x in every round against the original on an H200
  // (logsumexp_fwd), so a smaller consistent gap is the measurement's bias, not the kernel's.
  double tie_band = 0.002;
  // A finalist's case is judged against the original as it runs alone: when the original, timed beside
  // the finalist, ran more than this fraction slower than in its own timed run (the baseline, same timing
  // method) times the finalist's own slowdown there, it counts at that expected time (verify_phase.cc,
  // JudgeAgainstOriginalAlone: an autotuned original picks its config per process; on an H200 max_reduction's
  // original ran one size at 7.3 us alone and 154 us beside a finalist that was 0.70x of it alone). 25%:
  // the drifts seen so were 1.6x to 21x, while a 1.2 us case of a plain original ran 12% slower beside
  // the per-shape autotune that ran its very config there (matmul_triton1): timing noise at that size.
  double reference_drift = 0.25;
  int finalists = 3;
  int eta = 3;
  int compile_jobs = 2;  // --compile-jobs: parallel compile requests (0: none)
  // Compile workers build the search's inputs on the GPU beside the measuring worker: only as many as the
  // original's peak GPU memory (its timed run's, per process) fits in this share of the GPU's memory, with the
  // measuring worker's own (ksoftmax_triton on an H200: 8 compile workers drawing its 32 GiB input sweep at once
  // ran the GPU out of memory, and the original's next run with it). 0: no such limit.
  double compile_memory_share = 0.85;
  int batch = 8;         // configs per strategy round handed out at once
  uint64_t seed = 1234;
  int search_trials = 1;
  int verify_trials = 3;
  double reserve_fraction = 0.1;          // of the budget, kept at least for finalists and verification
  int64_t small_block = 64;               // a 1-D block below this is grown first (see Optimize)
  double min_search_fraction = 0.15;      // of the budget: the search's least window, however late it starts
  double min_profile_s = 10;              // the least a profile takes (a fresh worker under ncu): with less time
                                          // left before the hard end the original is not profiled
  // With a hard end, the original's profile may take at most this share of the time left before it, but never
  // less than profile_cap_floor_s (nor more than all of it); past it ncu is stopped and the run goes on
  // measure-only. On an H200 (sessions 15-18) 55 of 57 profiles took at most 24.5 s (median 13.6 s);
  // context_attn_nopad's took 34 s, chunk_retention's 58 s.
  double profile_share = 0.5;
  double profile_cap_floor_s = 30;
  // The case profiled is the slowest one timed, unless its median is longer than this: then the slowest timed
  // case up to it, else the fastest (ncu replays the kernel dozens of times, and a kernel of 89 ms ran a
  // 30 s profile out of time before anything was searched: context_attn_nopad on an H200). 0: the slowest.
  double profile_case_max_ms = 25;
  double long_cost_factor = 3.0;          // a long verification run (all cases, verify trials, interleaved with the
                                          // original) against one search measurement
  bool per_shape_fallback = true;         // --no-per-shape: no autotune of a split finalist and the original
  bool profile_winner_always = false;     // --profile-winner: profile the winner even past the budget
  bool largest_case_only = false;         // --search-cases largest: time only the slowest case while
                                          // searching (verification always covers all cases)
  std::vector<std::string> search_cases;  // explicit subset (empty: all)
  std::vector<std::string> cases;         // --cases: the task's cases this run uses at all (baseline,
                                          // search, verification; empty: all). "@largest:K" asks the
                                          // worker for the K cases with the most input bytes.
  bool dry_run = false;                   // --dry-run: interpreter correctness checks, no timing
  // The tuned kernel was chosen statically among several (no --kernel): when the original's run shows it
  // never ran, the run ends after the baseline with OptimizeResult::kernels_ran, for the caller to choose
  // among the kernels that ran.
  bool kernel_chosen = false;
  bool tuned_seeds = true;                // measure TunedSeeds (search/space.h) before the strategy's proposals
  int dry_run_candidates = 4;
  bool emit_autotune = false;  // --emit-autotune
  int autotune_configs = 4;
  exec::Policy policy = exec::Policy::kTrusted;  // rewrites of the user's own kernel
  double timeout_s = 120;
  PruneContext prune;
  nlohmann::json short_timing = {{"warmup_ms", 10}, {"rep_ms", 25}, {"rounds", 1}, {"time_reference", false}};
  nlohmann::json medium_timing = {{"warmup_ms", 25}, {"rep_ms", 100}, {"rounds", 1}, {"time_reference", false}};
  nlohmann::json long_timing = {{"warmup_ms", 25}, {"rep_ms", 100}, {"rounds", 5}, {"time_reference", true}};
  std::function<double()> clock;  // seconds; null: steady clock (tests inject a fake)
  // When the command started, on that clock (SteadySeconds() unless `clock` is set) (the budget and wall_s count from
  // here: starting the workers and the device lookup are part of the user's wait); < 0: when Optimize is called.
  double started_at = -1;
  nlohmann::json startup = nlohmann::json::object();  // the command's own steps before Optimize (reported)
};

struct OptimizeInput {
  task::TaskSpec task;
  std::string original_source;  // the module candidates replace (TritonBench: the part above the line)
  // The module candidates are rendered from when it is not the original: the original with its literal
  // tile sizes lifted to constexpr parameters (rewrite::LiftLiterals; the same program at their defaults).
  // Empty: the original. The baseline, verification's reference and a kept original stay original_source.
  std::string render_source;
  std::string kernel;           // the tuned kernel
  Space space;
  Config baseline;  // the original's values
  // The kernel carries @triton.autotune: the original runs whatever its autotuner picks per shape and
  // process, so `baseline` (its first config) is measured on its own before the search starts from it.
  bool autotuned = false;
  std::vector<std::string> notes;  // e.g. skipped tunables
  // Parameters whose original value is known only at run time (SpaceBuild::runtime_valued): taken from
  // the original's compile facts once it has run.
  std::vector<std::string> runtime_valued;
  // The space is the user's (kiln optimize --grid): the loop adds no values of its own to it (a recorded
  // value's neighbourhood, smaller blocks for a small grid); the recorded value itself still joins.
  bool space_given = false;
  // Without --kernel: the launched kernels `kernel` was chosen among (by their tunables, statically).
  std::vector<std::string> launched_kernels;
};

struct Deps {
  Measurer* measurer = nullptr;  // required
  Renderer* renderer = nullptr;  // required
  Profiler* profiler = nullptr;  // optional
  Recorder* recorder = nullptr;  // optional
  Progress* progress = nullptr;  // optional
  Proposer* proposer = nullptr;  // optional: rewrites from outside the space (kiln optimize --llm)
};

struct CaseTiming {
  std::string name;
  std::string method;  // the worker's timing method for the case ("cuda_graph", "events", ...)
  double median_ms = std::numeric_limits<double>::quiet_NaN();
  double p20_ms = std::numeric_limits<double>::quiet_NaN();
  double p80_ms = std::numeric_limits<double>::quiet_NaN();
};

struct CandidateRecord {
  int id = 0;
  Config config;
  std::string origin;  // "baseline", strategy name, "finalist", a proposer's name ("llm"), ...
  bool proposal = false;  // a proposer's whole module (its config is the original's, for the records)
  int on_proposal = -1;   // the search continued from a winning proposal: that proposal's id (its config is
                          // in the proposal's space)
  std::string source_hash;
  std::string verdict;  // exec verdicts plus "pruned", "render_error", "skipped"
  std::string message;
  double score_ms = std::numeric_limits<double>::infinity();  // geomean of case medians (rung 0)
  double rung1_ms = std::numeric_limits<double>::infinity();
  std::vector<CaseTiming> cases;
  double at_s = 0;                                   // seconds since the start
  double eval_s = 0;                                 // wall time of its evaluation(s)
  nlohmann::json phases = nlohmann::json::object();  // the worker's seconds per phase (load, inputs, check, timing)
  bool finalist = false;
  std::string final_outcome;               // "won", "rejected: ...", ""
  std::vector<exec::KernelFacts> kernels;  // compile facts (JSON: exec::ToJson)
};

struct CaseComparison {
  std::string name;
  double baseline_ms = 0, best_ms = 0;
  double speedup = 1, spread_lo = 1, spread_hi = 1;
  bool passed = true;
  double max_abs_err = 0;
  // The interleaved reference's median when the case is judged against the original's own faster run
  // instead (baseline_ms is then that run's median; OptimizeOptions::reference_drift); 0 otherwise.
  double interleaved_ms = 0;
};

// The parametric search continued from a proposer's verified winner (its module's own tunables).
struct ProposalSearch {
  int proposal_id = -1;          // the winning proposal's candidate id
  std::string origin;            // the proposer ("llm")
  double proposal_speedup = 1;   // the proposal's verified geometric-mean speedup over the original
  std::string kernel;            // the rewritten module's tuned kernel
  Space space;                   // its tunables ("" kernel and empty space: it had none)
  Config from, to;               // the proposal's values, and the tuned ones (== from when nothing won)
  std::string strategy;
  bool improved = false;         // a config beat the proposal and then the original, both verified
  double speedup_over_proposal = 1;  // the tuned module's verified speedup over the proposal
  std::string outcome;           // what happened, in words ("kept as is: no tunables", ...)
  std::string stop_reason;
  int measured = 0;
  nlohmann::json ToJson() const;
};

struct OptimizeResult {
  std::string task;
  std::string kernel;
  std::string strategy;   // resolved name
  std::string mode;       // "profiled", "measure-only", "dry-run"
  std::string mode_note;  // why measure-only
  std::string device, device_uuid;
  nlohmann::json versions = nlohmann::json::object();
  Space space;
  Config baseline_config, best_config;
  bool improved = false;
  std::string kept_reason;      // why the original was kept
  // OptimizeOptions::kernel_chosen and the tuned kernel did not run when the original ran the cases: the
  // kernels that did (the run ended after its baseline).
  bool tuned_kernel_not_run = false;
  std::vector<std::string> kernels_ran;
  std::string best_source;      // the module to write (the original when !improved)
  std::string autotune_source;  // with --emit-autotune
  double geomean_speedup = 1.0;
  std::string best_origin;  // the winner's origin: a strategy's name, "per-shape autotune", or a proposer's ("llm")
  bool best_is_proposal = false;  // the winner is a proposer's whole module (Deps::proposer), tuned or not
  std::optional<ProposalSearch> proposal_search;  // a proposal won: the search continued from it
  std::vector<CaseComparison> cases;
  std::optional<ProfileSummary> profile_before, profile_after;
  double roofline_before = -1, roofline_after = -1;
  bool roofline_after_estimated = false;
  bool best_is_autotune = false;  // best_source is @triton.autotune over the winner and the original  // from the
                                  // profiled case's speedup (the winner not profiled)
  double reserve_s = 0;           // seconds of the budget kept for verification after the search
  // Where the run's time went, in seconds: startup (before the baseline), baseline, profile, search (the
  // strategy's rounds and halving; what --budget-scope search bounds), verification (finalists, per-shape,
  // --emit-autotune, the winner's profile), and budget/budget_scope/hard_end as the run used them.
  nlohmann::json timings = nlohmann::json::object();
  int cut_slow = 0;               // candidates pruned at their deadline (slow_factor x the original's measurement)
  nlohmann::json startup = nlohmann::json::object();  // seconds before the loop, by step (worker start, ...)
  std::vector<CandidateRecord> candidates;
  int measured = 0, compiled = 0, pruned = 0, failed = 0;
  int pruned_static = 0;  // configs the strategy skipped: pruned before compiling (see notes)
  std::string stop_reason;
  double wall_s = 0;
  std::vector<std::string> notes;
  int64_t run_id = 0;

  nlohmann::json ToJson() const;
};

// Runs the loop: a short driver over named phases (optimize_run.h). Errors: the original fails its own
// check (InvalidArgument), no GPU and not a dry run (Unavailable), or the Measurer's machinery failed
// (its Status, prefixed; never turned into a candidate's verdict).
Result<OptimizeResult> Optimize(const OptimizeInput& in, const OptimizeOptions& o, const Deps& d);

// Geometric mean of the finite positive values (NaN when none).
double GeoMean(const std::vector<double>& v);

}  // namespace kiln::search
