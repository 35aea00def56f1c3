// kiln/search: one run of the tuning loop as named phases over explicit state (internal to
// src/search; the interface is Optimize in loop.h). loop.cc holds the driver and the phases up to
// the strategy, propose_phase.cc a proposer's rewrites, proposal_search_phase.cc the search continued
// from a winning rewrite, search_phase.cc the search rounds and the dry run, verify_phase.cc the
// finalists, their verification and what follows a winner.
//
// A phase returns an error Status only for a machinery failure (the Measurer's) or an unusable
// original; the driver then records the run as failed and returns the error. A phase that ends the
// run early with a result (kept, dry run) sets `finished_`.
#pragma once

#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "search/loop.h"
#include "search/strategy.h"

namespace kiln::search::internal {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Seconds the worker reported for the named phases of a request (phases_s).
double PhaseSum(const nlohmann::json& phases, std::initializer_list<const char*> names);
// Median of one case (0 when it was not timed).
double CaseMs(const std::vector<CaseTiming>& cases, const std::string& name);
std::vector<CaseTiming> CaseTimes(const exec::EvalResult& r);
// Geometric mean of the case medians over `names` (all cases when empty); +inf when not ok or a
// case has no time.
double Score(const exec::EvalResult& r, const std::vector<std::string>& names);
nlohmann::json CandJson(const CandidateRecord& c);
// A note when some of the original's cases were timed with events because no CUDA graph could replay them
// (random numbers, a failed capture); empty otherwise.
std::string EventTimingNote(const exec::EvalResult& r);
// A note naming the perf sizes the worker skipped because they do not fit the GPU (response "skipped_cases").
std::string SkippedCasesNote(const exec::EvalResult& r);
// The worker answered that the task's own code failed (exec::WorkerRunner: "task error: ..."), not the machinery.
bool IsTaskError(const Status& s);
// Per-case comparison of a finalist's long run against the original, which that request timed
// interleaved with it (its timing baseline). A case without that timing cannot win.
std::vector<CaseComparison> Compare(const exec::EvalResult& cand);

class OptimizeRun {
 public:
  OptimizeRun(const OptimizeInput& in, const OptimizeOptions& o, const Deps& d);
  Result<OptimizeResult> Run();

 private:
  // Phases, in order.
  Status ConnectToDevice();
  Status MeasureOriginal();
  void ProfileOriginal();
  void AddBlockSizeMoves();
  void ReachSmallerBlocks();
  void CapTiledBlocks();
  std::string TileText(const Param& p, const Config& c) const;
  // The diagnosis asks for smaller tiles (small_grid: the grid does not fill the GPU), from its moves.
  bool SmallGrid() const;
  Status ChooseStrategy();
  Status MeasureAutotunedStart();
  Status ProposeRewrites();
  void ProfileBestProposal(BestSoFar* best, std::string* source);
  // The best proposal, verified; when it wins, the search continues over its module's tunables.
  Status ContinueFromProposal();
  Status DryRun();
  Status Search();
  bool FinalistEligible(const CandidateRecord& cr) const;
  std::vector<size_t> PickFinalists();
  Status VerifyFinalists(const std::vector<size_t>& order);
  // After finalists failed the task's own check: the next candidates that beat the original at rung 0
  // and whose block sizes are none of the failed ones', best first (at most --finalists); empty when none
  // failed that way or nothing else qualifies.
  std::vector<size_t> RefillFinalists();
  // A case slower than the original in every interleaved round (verify_phase.cc).
  bool SlowerInEveryRound(const CaseComparison& x) const;
  // The candidate's block-size values ("BV=2"; "" when the space has no block size).
  std::string BlockKey(const Config& c) const;
  Status TryPerShapeAutotune();
  // One per-shape candidate verified like a finalist (both long runs and the own check): "" when it
  // passes, else why not; its first run in `r1`.
  Result<std::string> VerifyPerShape(const Config& config, const std::string& src, const std::string& origin,
                                     const std::vector<CaseTiming>& solo, exec::EvalResult* r1);
  // The shapes the per-shape run `r` met, each pinned to the finalist where its own run (`won`) was faster.
  ShapePins PinsFrom(const exec::EvalResult& r, const std::vector<CaseComparison>& won) const;
  void KeepOriginal();
  // After the original passed: a failure later in the loop keeps the original, with the reason.
  Result<OptimizeResult> KeepAfterFailure(const Status& error);
  // The original failed its timed baseline: whether it passes its own check (kiln eval's default cases);
  // then it is kept with the reason, else the error: the own check's verdict and message, then `failure`.
  Status CheckOriginalOnItsOwn(const std::string& failure);
  std::string OtherKernelNote(const std::map<std::string, double>& shares) const;
  std::string ProfileCase(const exec::EvalResult& br, const exec::CaseResult* slowest,
                          std::vector<std::string>* notes) const;
  int CompileJobsByMemory(const exec::EvalResult& br, std::vector<std::string>* notes) const;
  // The original failed its timed run at `--cases @largest:K`: the K next largest sizes, then the K after
  // them (the worker's "@largest:K:skip:S"), while time is left. The first run it passes replaces the
  // failed one (said in `note`); nullopt when none passes or the cases are not such a selector.
  std::optional<exec::EvalResult> RetryBelowLargest(const exec::EvalResult& failed, std::string* note);
  void ProfileWinner();
  Status EmitAutotune(const std::vector<size_t>& order);

  // Search helpers.
  struct Pending {
    CandidateRecord rec;
    std::string src;
    int compile_index = -1;
    double compile_timeout_s = 0;  // the timeout its compile request was sent with
  };
  Status SearchRound(const std::vector<Config>& proposals, bool* stopped);
  std::vector<Pending> RenderRound(const std::vector<Config>& proposals, std::vector<exec::EvalRequest>* compiles);
  Status MeasurePending(Pending* p, CompileBatch* batch, bool* stopped);
  void HandleCompiled(const exec::EvalResult& compiled, Pending* p);
  void ObserveCandidate(CandidateRecord rec);
  bool OverBudget() const { return Elapsed() >= search_end_; }
  // Where the budget ends, in seconds since the start (--budget-scope: the command's start, or the search's).
  double BudgetEnd() const { return budget_start_ + o_.budget_seconds; }
  // A search candidate's deadline per request: slow_factor x the original's measurement (at least
  // slow_floor_s), never more than timeout_s; cut further by Measure at the hard end.
  double CandidateTimeout() const;
  // A candidate's request that ran into its deadline is pruned as too slow (not a failure): -> whether it was.
  // `asked_s`: the timeout the caller asked for; `sent_s`: the one the request went out with (the hard end's cut).
  bool CutAsSlow(double asked_s, double sent_s, const exec::EvalResult& r, CandidateRecord* rec);
  // The run's time, by phase (OptimizeResult::timings), at its end.
  void RecordTimings();
  int EvalsLeft() const { return o_.max_evals > 0 ? o_.max_evals - res_.measured : 1 << 30; }
  void UpdateReserve();
  double LongRunsSeconds() const;  // what verification's three long runs are expected to take

  // The search on a winning proposal (proposal_search_phase.cc).
  double MeasurementCost() const;
  Status SearchProposal(const CandidateRecord& prop, const std::string& src, const ProposalSpace& space,
                        ProposalSearch* ps);
  size_t MergeProposalSearch(const CandidateRecord& prop, const OptimizeResult& sub, double at);

  // Verification helpers.
  // `solo`: the finalist's own (search) timings, from which its slowdown in the long run is estimated
  // (JudgeAgainstOriginalAlone); null when it has none.
  Result<std::string> JudgeLongRun(const std::string& src, const std::vector<CaseTiming>* solo,
                                   std::vector<CaseComparison>* cmp, exec::EvalResult* r = nullptr);
  std::string Judge(const exec::EvalResult& r, const std::vector<CaseTiming>* solo,
                    std::vector<CaseComparison>* cmp) const;
  void KeepAutotunePicks(const nlohmann::json& raw);
  // The profiler on `source` (nullopt: the original) at the profiled case, seeded with the kept picks.
  Result<ProfileSummary> ProfileSource(const std::optional<std::string>& source);
  void JudgeAgainstOriginalAlone(const exec::EvalResult& r, const std::vector<CaseTiming>* solo,
                            std::vector<CaseComparison>* cmp) const;
  Result<std::string> OwnCheck(const std::string& src);
  void DeclareWinner(const Config& cfg, const std::string& src, const std::vector<CaseComparison>& first,
                     std::vector<CaseComparison> second);
  std::string SourceOf(size_t candidate);

  // Measurement.
  exec::EvalRequest MakeRequest(const std::optional<std::string>& source, exec::Mode mode, uint64_t seed, int trials,
                                const nlohmann::json& timing, const std::vector<std::string>& cases) const;
  // Every request: its timeout cut at the hard end; none starts past it (the run then ends, hard_end_hit_).
  // `sent_s`, when given: the timeout the request went out with.
  Result<exec::EvalResult> Measure(exec::EvalRequest r, double* sent_s = nullptr);
  Result<exec::EvalResult> TimeShort(const std::string& src, CandidateRecord* rec);
  uint64_t NextSeed();

  // Clock, records, display.
  double Now() const;
  double Elapsed() const { return Now() - t0_; }
  void Step(const std::string& kind, const nlohmann::json& j);
  void Say(const std::string& s);
  void Show(const std::string& phase);
  Result<OptimizeResult> Finish(const std::string& status);
  Status Fail(const std::string& stop_reason, Status error);

  OptimizeInput in_;  // a copy: values known only at run time are filled in after the original runs
  const OptimizeOptions& o_;
  const Deps& d_;
  OptimizeResult res_;
  ProgressState ps_;
  double t0_ = 0;
  uint64_t seed_ = 0;
  int next_id_ = 0;
  bool finished_ = false;      // a phase ended the run with a result
  bool original_passed_ = false;  // the original passed its baseline: a later failure keeps it (exit 0)
  bool hard_end_hit_ = false;     // a request could not start before the hard end
  bool compiles_off_ = false;     // a compile worker failed in the task's code: candidates compile as they are measured
  int compile_jobs_ = o_.compile_jobs;  // compile requests at once: fewer than asked where GPU memory says so
  double budget_start_ = 0;       // seconds since the start where the budget begins (--budget-scope)
  double t_search0_ = -1, t_verify0_ = -1;  // seconds since the start: the search's and verification's starts
  std::string finish_status_;  // its status ("kept", "dry-run", ...)

  // What the original's measurement established.
  PruneContext prune_;
  exec::EvalResult original_;  // its short run
  CandidateRecord base_;       // its record
  std::vector<std::string> all_cases_;
  std::vector<std::string> run_cases_;     // --cases resolved to names by the baseline (empty: all)
  std::vector<std::string> search_cases_;  // the cases timed while searching
  std::string profile_case_;               // the case profiled: the original's slowest (ProfileCase)
  Config ran_with_;  // the integer constexprs the tuned kernel ran with in the original's run (TileElements)
  double profile_s_ = 0;                   // what one ncu profile costs here
  std::vector<std::string> moves_;         // from the diagnosis, highest priority first

  // Search state.
  std::unique_ptr<Strategy> strategy_;
  std::map<std::string, std::string> static_pruned_;  // config key -> reason
  double start_score_ = 1.0;
  double best_score_ = 0;
  Config best_config_;
  double t_measure_ = 0;  // what one search measurement costs (for the reserve)
  std::vector<double> cand_eval_s_;
  double search_floor_ = 0, search_end_ = 0;
  bool search_ends_at_hard_end_ = false;  // the hard end, not the budget, sets search_end_ (verification must fit)
  int measured_search_ = 0;
  double base_profile_case_ms_ = 0, best_profile_case_ms_ = 0;

  // Verification state.
  Status halving_error_;                   // a machinery failure while re-timing for the halving
  std::map<size_t, std::string> sources_;  // candidate index -> rendered source ("" when it failed)
  std::set<std::string> proposal_sources_;  // hashes of a proposer's modules (and of their tuned forms)
  std::set<std::string> strict_sources_;    // those of an untrusted proposer: evaluated under policy strict
  std::optional<bool> original_own_ok_;
  // Finalists that won some cases and lost others: the candidate's index and its first long run, per case.
  std::vector<std::pair<size_t, std::vector<CaseComparison>>> lost_some_;
  // Block sizes (BlockKey) whose finalist failed the task's own check, with that finalist's id: the
  // others with the same block sizes are skipped (only warps, stages or a hint differ, which do not
  // change what is computed: on an H200, fused_recurrent_delta's three BV=2 finalists all failed its test
  // one after another, and the BV=1 and BV=4 candidates behind them were never tried).
  std::map<std::string, int> wrong_blocks_;
  nlohmann::json autotune_picks_ = nlohmann::json::array();  // KeepAutotunePicks
  std::set<std::string> drift_noted_;     // cases noted as judged against the original's own faster run
};

}  // namespace kiln::search::internal
