#include "app/llm_proposer.h"

#include <fmt/format.h>

#include "gen/chain.h"
#include "gen/feedback.h"

namespace kiln::app {

std::string ProfileText(const search::ProposalContext& ctx) {
  std::string s;
  if (ctx.profile) {
    const auto& p = *ctx.profile;
    s += fmt::format("- kernel {}: {} bound", p.kernel.empty() ? ctx.kernel : p.kernel,
                     p.bound.empty() ? "(unclassified)" : p.bound);
    if (p.roofline_fraction >= 0) s += fmt::format(", at {:.0f}% of its roofline", 100 * p.roofline_fraction);
    s += "\n";
    for (const auto& f : p.findings) s += fmt::format("- [{}] {}: {}\n", f.severity, f.rule, f.message);
  } else {
    s += "- no profile was taken (measure-only run): judge from the code\n";
  }
  for (const auto& [name, ms] : ctx.original_case_ms)
    if (ms == ms && ms > 0) s += fmt::format("- case {}: {:.4g} ms now\n", name, ms);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string ProposalFeedback(const search::ProposalOutcome& out) {
  gen::Attempt a;
  a.has_code = !out.source.empty();
  a.source = out.source;
  if (a.has_code) a.result = out.result;
  if (!a.ok()) return gen::Feedback(a);
  if (out.score_ms > 0 && out.original_score_ms > 0)
    return fmt::format(
        "Your rewrite is correct. It took {:.4g} ms against the original's {:.4g} ms ({:.2f}x). Propose a faster "
        "one; reply with the complete module in one ```python block.",
        out.score_ms, out.original_score_ms, out.original_score_ms / out.score_ms);
  return "Your rewrite is correct (checked without timing). Propose a faster one; reply with the complete module in "
         "one ```python block.";
}

LlmProposer::LlmProposer(llm::Client* client, gen::PromptTemplate tmpl, std::map<std::string, std::string> fields,
                         LlmProposerOptions o)
    : client_(client), tmpl_(std::move(tmpl)), fields_(std::move(fields)), o_(std::move(o)) {}

Result<std::vector<search::Proposal>> LlmProposer::Propose(const search::ProposalContext& ctx) {
  if (ctx.round == 0) {
    std::map<std::string, std::string> f = fields_;
    f["reference"] = ctx.source;
    f["profile"] = ProfileText(ctx);
    chains_.assign(static_cast<size_t>(std::max(1, o_.samples)), gen::Render(tmpl_, f));
  }
  std::vector<search::Proposal> out;
  for (size_t i = 0; i < chains_.size(); ++i) {
    if (ctx.round > 0 && i < ctx.previous.size()) chains_[i].push_back({"user", ProposalFeedback(ctx.previous[i])});
    llm::Sampling s = o_.sampling;
    s.seed = static_cast<int64_t>(o_.seed + i);
    KILN_ASSIGN_OR_RETURN(llm::ChatResult r, client_->Chat(chains_[i], s, o_.purpose));
    chains_[i].push_back({"assistant", r.content});
    search::Proposal p;
    p.source = gen::CodeOf(r.content);
    p.note = fmt::format("sample {}, round {}{}", i, ctx.round + 1, p.source.empty() ? ": the answer had no code" : "");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kiln::app
