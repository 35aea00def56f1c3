// kiln/app: the Proposer of `kiln optimize` without --llm (search/interfaces.h; docs/optimize.md, step 3):
// the source rewrites the original's diagnosis asks for and the parametric search cannot compose (a
// persistent grid, split-K), applied by kiln's own rewrites (src/rewrite) to the original module. Each
// proposal is then measured, verified and tuned further like a model's (search/propose_phase.cc); a
// rewrite that does not apply to the kernel is not proposed.
#pragma once

#include <string>
#include <vector>

#include "search/interfaces.h"
#include "task/task.h"

namespace kiln::app {

class RewriteProposer : public search::Proposer {
 public:
  // `task` and `kernel`: the original's; a winning proposal's module is analysed against them.
  RewriteProposer(task::TaskSpec task, std::string kernel);
  std::string name() const override { return "diagnosis"; }
  int rounds() const override { return 1; }
  // kiln's own rewrites of the user's kernel: measured under the run's policy, as the search's configs are
  // (under strict, each proposal rebuilt the perf inputs: 27 s a proposal for ksoftmax_triton's 58 GB).
  bool trusted() const override { return true; }
  std::vector<std::string> moves() const override;
  Result<std::vector<search::Proposal>> Propose(const search::ProposalContext& ctx) override;
  Result<search::ProposalSpace> Analyze(const std::string& source) override;

 private:
  task::TaskSpec task_;
  std::string kernel_;
};

// The rewrite requests (rewrite::Describe's text) a diagnosis move stands for, in the order they are
// proposed; none for a move the search composes itself (block sizes, warps, stages, ...). `autotuned`: the
// kernel's autotuner picks its warps, so no request sets them.
std::vector<std::string> RewritesForMove(const std::string& move, bool autotuned = false);

}  // namespace kiln::app
