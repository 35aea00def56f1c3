#include "app/llm_proposer.h"

#include <fmt/format.h>

#include "app/prepare_input.h"
#include "app/rewrite_renderer.h"
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

std::string BestSoFarText(const search::BestSoFar& best, const search::ProposalContext& ctx) {
  if (!(best.score_ms > 0)) return "";  // untimed (a dry run): nothing to compare
  std::map<std::string, double> orig(ctx.original_case_ms.begin(), ctx.original_case_ms.end());
  std::string s;
  if (best.is_original) {
    s = fmt::format("The fastest correct module so far is still the original: {:.4g} ms.\n", best.score_ms);
  } else {
    double o = 0;
    for (const auto& p : ctx.previous) o = p.original_score_ms > 0 ? p.original_score_ms : o;
    s = fmt::format("The fastest correct module so far is {}: {:.4g} ms{}.\n", best.what, best.score_ms,
                    o > 0 ? fmt::format(" against the original's {:.4g} ms ({:.2f}x)", o, o / best.score_ms) : "");
  }
  for (const auto& [name, ms] : best.case_ms) {
    if (!(ms > 0)) continue;
    auto it = orig.find(name);
    s += fmt::format("- case {}: {:.4g} ms{}\n", name, ms,
                     !best.is_original && it != orig.end() && it->second > 0
                         ? fmt::format(" (the original: {:.4g} ms)", it->second)
                         : "");
  }
  if (!best.findings.empty()) {
    s += best.findings_of_original && !best.is_original
             ? "Top findings of the original's profile (the fastest was not profiled):\n"
             : "Top findings of its profile:\n";
    for (size_t i = 0; i < best.findings.size() && i < 3; ++i)
      s += fmt::format("- [{}] {}: {}\n", best.findings[i].severity, best.findings[i].rule, best.findings[i].message);
  }
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

Result<search::ProposalSpace> ProposalSpaceOf(const task::TaskSpec& task, const std::string& kernel,
                                              const std::string& source) {
  const std::string path = task.path.empty() ? "proposal.py" : task.path;
  auto in = PrepareInputFromSource(task, source, path, kernel);
  if (!in.ok() && !kernel.empty() && in.status().code() == Code::kNotFound)
    in = PrepareInputFromSource(task, source, path, "");  // the rewrite renamed or replaced the kernel
  if (!in.ok()) return in.status();
  search::ProposalSpace sp;
  sp.kernel = in->kernel;
  sp.space = in->space;
  sp.baseline = in->baseline;
  sp.autotuned = in->autotuned;
  sp.notes = in->notes;
  sp.runtime_valued = in->runtime_valued;
  sp.renderer = std::make_shared<RewriteRenderer>(source, path, in->kernel);
  return sp;
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
    if (ctx.round > 0 && i < ctx.previous.size()) {
      std::string fb = ProposalFeedback(ctx.previous[i]);
      if (ctx.best) {
        const std::string b = BestSoFarText(*ctx.best, ctx);
        if (!b.empty()) fb = b + "\n\n" + fb;
      }
      chains_[i].push_back({"user", fb});
    }
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

Result<search::ProposalSpace> LlmProposer::Analyze(const std::string& source) {
  if (!o_.task) return Unavailable("no task to analyse the proposal against");
  return ProposalSpaceOf(*o_.task, o_.kernel, source);
}

}  // namespace kiln::app
