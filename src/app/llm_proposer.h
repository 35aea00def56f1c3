// kiln/app: the Proposer of `kiln optimize --llm` (search/interfaces.h; docs/generate.md, "kiln optimize
// --llm"): after the original's profile and diagnosis, a model behind an OpenAI-compatible API proposes
// rewritten modules (prompt: prompts/optimize.txt, with the module, the diagnosis and the original's
// times); each of `samples` chains keeps its conversation, and from the second round on is told how its
// last proposal fared (the verdict's feedback as in kiln generate, or its time against the original's).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gen/prompt.h"
#include "llm/client.h"
#include "search/interfaces.h"
#include "task/task.h"

namespace kiln::app {

struct LlmProposerOptions {
  int samples = 2;  // chains: proposals per round
  int rounds = 2;
  llm::Sampling sampling;
  uint64_t seed = 1234;  // chain i samples with seed + i
  std::string purpose;   // the LLM records' label ("optimize:<task>")
  // The task and the original's tuned kernel: a winning proposal's module is analysed against them
  // (Analyze); without a task, proposals are kept as they are.
  std::optional<task::TaskSpec> task;
  std::string kernel;
};

class LlmProposer : public search::Proposer {
 public:
  // `fields`: the task's template fields (gen::TaskFields); `client` must outlive the proposer.
  LlmProposer(llm::Client* client, gen::PromptTemplate tmpl, std::map<std::string, std::string> fields,
              LlmProposerOptions o);
  std::string name() const override { return "llm"; }
  int rounds() const override { return o_.rounds; }
  Result<std::vector<search::Proposal>> Propose(const search::ProposalContext& ctx) override;
  Result<search::ProposalSpace> Analyze(const std::string& source) override;

 private:
  llm::Client* client_;
  gen::PromptTemplate tmpl_;
  std::map<std::string, std::string> fields_;
  LlmProposerOptions o_;
  std::vector<std::vector<llm::Message>> chains_;  // each chain's conversation so far
};

// The {{profile}} field: the diagnosis's bound, roofline and findings, and the original's case times.
std::string ProfileText(const search::ProposalContext& ctx);
// What a chain is told about its last proposal, then (when timed) the fastest correct module so far.
std::string ProposalFeedback(const search::ProposalOutcome& out);
std::string BestSoFarText(const search::BestSoFar& best, const search::ProposalContext& ctx);
// A proposal's module analysed like the original (app::PrepareInputFromSource): the kernel of the
// original's name when the rewrite keeps one, else its launched kernel with the most tunables; its space
// and values, and a renderer over it.
Result<search::ProposalSpace> ProposalSpaceOf(const task::TaskSpec& task, const std::string& kernel,
                                              const std::string& source);

}  // namespace kiln::app
