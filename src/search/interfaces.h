// kiln/search: the boundaries of the tuning loop, each an interface with a test double
// (tests/search/fakes.h); the real implementations live in src/app and src/store.
//
//   Measurer   runs eval requests (exec::EvalRequest -> exec::EvalResult): app::CandidateRunner over
//              the GPU worker, recorded transcripts or a fake in tests. A candidate's failure is a
//              verdict in the result; an error Status is a machinery failure (the worker cannot
//              start, a protocol error, a replay miss) and stops the loop: it is never a verdict.
//              StartCompiles compiles a round's candidates (mode `compile`) in the background while
//              the loop times earlier ones.
//   Renderer   turns a config into a whole candidate module (the rewrites' SetParams), and a list
//              of configs into an @triton.autotune module (InsertAutotune).
//   Profiler   profiles one candidate (ncu) and diagnoses it: roofline fraction, bound, findings
//              with suggested moves. Optional: without it the loop is measure-only and says so.
//   Recorder   keeps every step of a run (the store's optimize_runs / optimize_steps).
//   Progress   the live display on stderr.
//   Proposer   whole rewritten modules from outside the parametric space (kiln optimize --llm: a language
//              model, issue 20). Optional; its proposals are measured, checked under policy strict and
//              verified like any candidate (origin: its name).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "exec/result.h"
#include "search/space.h"

namespace kiln::search {

// The compiles of one search round, in the background: Wait(i) blocks until request i is done.
// Destroying it abandons the requests not started yet.
class CompileBatch {
 public:
  virtual ~CompileBatch() = default;
  virtual Result<exec::EvalResult> Wait(size_t i) = 0;
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) = 0;
  // Versions and devices (the worker's hello).
  virtual Result<exec::HelloInfo> Hello() = 0;
  // Starts the mode `compile` requests of a round, at most `jobs` at once. The default runs them one
  // after another through Evaluate on one background thread (Evaluate must then be callable from two
  // threads at once); app::CandidateRunner spreads them over its compile workers.
  virtual std::unique_ptr<CompileBatch> StartCompiles(std::vector<exec::EvalRequest> requests, int jobs);
};

// Shapes whose config kiln measured, for a per-shape autotune: the autotune key's values there (as the
// worker reported them: exec::CaseResult::autotune_keys) and whether kiln's winner (true) or the original's
// config(s) (false) ran faster. Other shapes are left to the autotuner.
struct ShapePins {
  std::vector<std::string> names;                       // the autotune key's parameter names
  std::vector<std::pair<nlohmann::json, bool>> shapes;  // key values (a JSON array of scalars) -> winner?
};

class Renderer {
 public:
  virtual ~Renderer() = default;
  // The whole candidate module for `c` (the original module with the values set).
  virtual Result<std::string> Render(const Config& c) = 0;
  // The original module with @triton.autotune listing `configs` (best first).
  virtual Result<std::string> RenderAutotune(const std::vector<Config>& configs) {
    return Unavailable("this renderer cannot write @triton.autotune");
  }
  // A module whose every input shape runs the faster of `winner` and the original: @triton.autotune
  // over the two, or, when the original is itself autotuned, its own configs with `winner` added. With
  // `pins`, the shapes kiln measured run the config that was faster there, untimed by the autotuner.
  virtual Result<std::string> RenderPerShape(const Config& winner, const Config& baseline, const ShapePins& pins) {
    if (!pins.shapes.empty()) return Unavailable("this renderer cannot pin shapes");
    return RenderAutotune({winner, baseline});
  }
};

// What the loop and its report need of a diagnose::Finding, converted at the boundary
// (app/ncu_profiler.cc), so the search core does not depend on the diagnosis.
struct FindingView {
  std::string rule;      // diagnose's rule id, e.g. "memory_bound_headroom", "register_spills"
  std::string severity;  // diagnose::SeverityName: "info", "minor" or "major"
  std::string message;
  std::vector<std::string> moves;  // in the search's vocabulary (app::SearchMoveName), e.g. "bigger_tiles"
  nlohmann::json evidence = nlohmann::json::array();  // diagnose::ToJson(finding)["evidence"]
};

struct ProfileSummary {
  std::string kernel;
  std::string bound;              // "memory", "compute", "latency", "balanced", ...
  double roofline_fraction = -1;  // 0..1 of the relevant roof; < 0 unknown
  double duration_ms = -1;        // ncu duration (clocks unlocked; not used for ranking)
  std::vector<FindingView> findings;
  // Each profiled kernel's share of the case's GPU time (its launches summed), by name.
  std::map<std::string, double> kernel_shares;
  nlohmann::json raw = nlohmann::json::object();
  nlohmann::json ToJson() const;
};

class Profiler {
 public:
  virtual ~Profiler() = default;
  // Whether profiling can run here (ncu found, a GPU): ok, or Unavailable with a message for the user.
  virtual Status Available() = 0;
  // Profiles the candidate (nullopt: the task's own code) on one case (empty: the task's first).
  virtual Result<ProfileSummary> Profile(const task::TaskSpec& task, const std::optional<std::string>& source,
                                         const std::string& case_name) = 0;
  // The longest the next profiles may take, in seconds (the run's hard end); a profiler that cannot be cut
  // ignores it.
  virtual void LimitSeconds(double seconds) {}
  // The autotune picks the run's trusted responses reported (exec::EvalRequest::autotune_picks), for the
  // next profiles: the original's autotuned kernels then run the configs they ran when timed, instead of
  // tuning again in the profiler's own process (where they could pick another). A profiler that starts no
  // worker ignores them.
  virtual void SeedAutotune(const nlohmann::json& picks) {}
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual int64_t BeginRun(const nlohmann::json& info) = 0;
  virtual void Step(int64_t run, const std::string& kind, const nlohmann::json& detail) = 0;
  virtual void EndRun(int64_t run, const std::string& status, const nlohmann::json& result) = 0;
};

// What a proposer is told: the module, the diagnosis, the original's times, and how its earlier
// proposals fared (round > 0).
struct ProposalOutcome {
  std::string source;            // "" : the proposal had no code
  std::string verdict;           // exec verdict, or "no_code"
  exec::EvalResult result;       // its short timing with its check (when measured)
  double score_ms = -1;          // geomean of its case medians (< 0: none)
  double original_score_ms = -1;
};
// The fastest correct candidate so far (the original, or a proposal that beat it), told to the proposer
// from the second round on.
struct BestSoFar {
  std::string what;      // "the original", "proposal #7 (sample 1, round 1)"
  bool is_original = true;
  double score_ms = -1;  // geomean of its case medians (short timing; < 0: untimed, a dry run)
  std::vector<std::pair<std::string, double>> case_ms;  // case -> median
  std::vector<FindingView> findings;  // its diagnosis's findings (the original's when it was not profiled)
  bool findings_of_original = true;   // the findings are the original's profile's, not its own
};
struct ProposalContext {
  std::string source;                        // the original module
  std::string kernel;                        // the tuned kernel
  std::optional<ProfileSummary> profile;     // the original's profile and diagnosis, when one was taken
  std::vector<std::pair<std::string, double>> original_case_ms;  // case -> median (short timing)
  int round = 0;
  std::vector<ProposalOutcome> previous;     // the last round's proposals, in their order
  std::optional<BestSoFar> best;             // round > 0: the fastest correct candidate so far
};
struct Proposal {
  std::string source;  // the whole module ("" : the answer had no code)
  std::string note;    // e.g. the chain and turn it came from
};

// What the parametric search needs to continue from a proposal's module: its tuned kernel's tunables,
// analysed like the original's, and a renderer over the proposal's source.
struct ProposalSpace {
  std::string kernel;
  Space space;
  Config baseline;  // the proposal's own values
  bool autotuned = false;
  std::vector<std::string> notes;
  std::vector<std::string> runtime_valued;
  std::shared_ptr<Renderer> renderer;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual std::string name() const = 0;  // the origin of its candidates ("llm")
  virtual int rounds() const = 0;        // how many times to ask
  // Whether its modules are kiln's own rewrites of the user's kernel, measured under the run's policy like the
  // search's configs; otherwise (a model's code) under policy strict.
  virtual bool trusted() const { return false; }
  // The diagnosis moves (search vocabulary) its proposals address: not noted as moves nothing composes.
  virtual std::vector<std::string> moves() const { return {}; }
  // The round's proposals. An error (the model cannot be reached) ends the proposals, not the run.
  virtual Result<std::vector<Proposal>> Propose(const ProposalContext& ctx) = 0;
  // The search space of a winning proposal's module, to tune it further. An error (it cannot be
  // analysed) or an empty space: the proposal is kept as it is.
  virtual Result<ProposalSpace> Analyze(const std::string& source) {
    return Unavailable("this proposer cannot analyse its proposals");
  }
};

struct ProgressState {
  std::string phase;  // "baseline", "profile", "search", "finalists", "verify", "done"
  int tried = 0;      // candidates measured
  int pruned = 0;
  int failed = 0;
  double best_speedup = 1.0;  // estimate vs the original (short timings)
  std::string best_config;
  double elapsed_s = 0;
  double budget_s = 0;
};

class Progress {
 public:
  virtual ~Progress() = default;
  virtual void Update(const ProgressState& s) = 0;
  virtual void Line(const std::string& text) = 0;  // a message that stays on screen
  virtual void Finish() = 0;
};

}  // namespace kiln::search
