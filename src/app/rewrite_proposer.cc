// kiln/app: the diagnosis's source rewrites as proposals (see rewrite_proposer.h).
#include "app/rewrite_proposer.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "app/llm_proposer.h"
#include "rewrite/rewrite.h"

namespace kiln::app {

std::vector<std::string> RewritesForMove(const std::string& move) {
  // One program per SM looping over the tiles (the SM count read at run time).
  if (move == "persistent_grid") return {"persistent_grid"};
  // Few programs over a long K loop (matmul_triton1: one program for 132 SMs): 4 and 16 partial products.
  if (move == "split_k") return {"split_k SPLIT_K=4", "split_k SPLIT_K=16"};
  return {};
}

RewriteProposer::RewriteProposer(task::TaskSpec task, std::string kernel)
    : task_(std::move(task)), kernel_(std::move(kernel)) {}

std::vector<std::string> RewriteProposer::moves() const { return {"persistent_grid", "split_k"}; }

Result<std::vector<search::Proposal>> RewriteProposer::Propose(const search::ProposalContext& ctx) {
  std::vector<search::Proposal> out;
  if (ctx.round > 0 || !ctx.profile) return out;
  std::vector<std::pair<std::string, std::string>> asked;  // (request, the finding that asked for it)
  std::set<std::string> seen;
  for (const auto& f : ctx.profile->findings)
    for (const auto& m : f.moves)
      for (const auto& rq : RewritesForMove(m))
        if (seen.insert(rq).second) asked.push_back({rq, f.rule});
  const std::string path = task_.path.empty() ? "module.py" : task_.path;
  for (const auto& [text, rule] : asked) {
    auto rq = rewrite::ParseRequest(text);
    if (!rq.ok()) return Internal("rewrite request '" + text + "': " + rq.status().message());
    auto done = rewrite::ApplySequence(ctx.source, path, rewrite::Target{ctx.kernel, {}}, {*rq});
    if (!done.ok()) continue;  // it does not apply to this kernel (the reason is the rewrite's)
    out.push_back({done->source, fmt::format("{} (diagnosis: {})", text, rule)});
  }
  return out;
}

Result<search::ProposalSpace> RewriteProposer::Analyze(const std::string& source) {
  return ProposalSpaceOf(task_, kernel_, source);
}

}  // namespace kiln::app
