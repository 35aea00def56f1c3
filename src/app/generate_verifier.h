// kiln/app: the Verifier of `kiln generate` (gen/chain.h): a candidate goes the way of `kiln eval`
// (exec::Evaluator over a worker from the runner factory: static gate, result cache, records), and a
// correct but slow one, with --profile, through ncu and the diagnosis (NcuProfiler).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "exec/evaluator.h"
#include "exec/runner.h"
#include "gen/chain.h"
#include "search/interfaces.h"

namespace kiln::app {

class EvalVerifier : public gen::Verifier {
 public:
  // `base` carries the protocol (mode, policy, seed, trials, timeout); `store` may be null.
  EvalVerifier(std::unique_ptr<exec::Runner> runner, store::Store* store, exec::EvalRequest base);
  ~EvalVerifier() override;
  Result<exec::EvalResult> Verify(const task::TaskSpec& task, const std::string& source) override;
  bool timed() const override { return base_.mode == exec::Mode::kTime; }
  std::vector<gen::Finding> Diagnose(const task::TaskSpec& task, const std::string& source,
                                     const exec::EvalResult& r) override;
  // Turns on the diagnosis of slow answers (ncu through `python`); a note when it cannot run here.
  std::optional<std::string> EnableProfiler(const std::string& python);

 private:
  std::unique_ptr<exec::Runner> runner_;
  exec::Evaluator evaluator_;
  exec::EvalRequest base_;
  std::unique_ptr<search::Profiler> profiler_;
};

// The request that evaluates `source` on `task` (TritonBench: the part above the test separator).
exec::EvalRequest CandidateRequest(const exec::EvalRequest& base, const task::TaskSpec& task,
                                   const std::string& source);

// At most `n` findings, the most severe first.
std::vector<gen::Finding> TopFindings(const std::vector<search::FindingView>& findings, size_t n);

}  // namespace kiln::app
