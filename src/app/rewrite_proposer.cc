// kiln/app: the diagnosis's source rewrites as proposals (see rewrite_proposer.h).
#include "app/rewrite_proposer.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "analysis/model.h"
#include "app/llm_proposer.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

namespace kiln::app {

std::vector<std::string> RewritesForMove(const std::string& move, bool autotuned) {
  // One program per SM looping over the tiles (the SM count read at run time).
  if (move == "persistent_grid") return {"persistent_grid"};
  // Few programs over a long K loop (matmul_triton1: one program for 132 SMs): 4 and 16 partial products.
  if (move == "split_k") return {"split_k SPLIT_K=4", "split_k SPLIT_K=16"};
  // Many programs of a few hundred bytes (dequantize_rowwise, logsumexp_fwd: 2^19-2^21 rows of 128
  // elements): 8 rows in turn per program ran 2.4x faster on an H200 at 4 warps, 4x at one warp and 5x at one
  // warp with the loop pipelined over 3 stages (16 rows no faster); the search then tunes ROWS_PER_PROGRAM and
  // the warps. An autotuned kernel picks its own warps.
  if (move == "rows_per_program" && autotuned) return {"rows_per_program rows=8", "rows_per_program rows=8 stages=3"};
  if (move == "rows_per_program")
    return {"rows_per_program rows=8", "rows_per_program rows=8 stages=3 ;; set_params num_warps=1"};
  return {};
}

RewriteProposer::RewriteProposer(task::TaskSpec task, std::string kernel)
    : task_(std::move(task)), kernel_(std::move(kernel)) {}

std::vector<std::string> RewriteProposer::moves() const { return {"persistent_grid", "split_k", "rows_per_program"}; }

Result<std::vector<search::Proposal>> RewriteProposer::Propose(const search::ProposalContext& ctx) {
  std::vector<search::Proposal> out;
  if (ctx.round > 0 || !ctx.profile) return out;
  const std::string path = task_.path.empty() ? "module.py" : task_.path;
  // An autotuned kernel picks its own warps: its proposals do not set them.
  bool autotuned = false;
  if (auto tree = pyast::Tree::Parse(ctx.source, path); tree.ok())
    if (auto model = analysis::AnalyzeModule(**tree); model.ok())
      if (const auto* k = model->FindKernel(ctx.kernel)) autotuned = k->autotune.has_value();
  std::vector<std::pair<std::string, std::string>> asked;  // (request, the finding that asked for it)
  std::set<std::string> seen;
  for (const auto& f : ctx.profile->findings)
    for (const auto& m : f.moves)
      for (const auto& rq : RewritesForMove(m, autotuned))
        if (seen.insert(rq).second) asked.push_back({rq, f.rule});
  for (const auto& [text, rule] : asked) {
    auto seq = rewrite::ParseRequests(text);  // "a ;; b": one rewrite after another
    if (!seq.ok()) return Internal("rewrite request '" + text + "': " + seq.status().message());
    auto done = rewrite::ApplySequence(ctx.source, path, rewrite::Target{ctx.kernel, {}}, *seq);
    if (!done.ok()) continue;  // it does not apply to this kernel (the reason is the rewrite's)
    out.push_back({done->source, fmt::format("{} (diagnosis: {})", text, rule)});
  }
  return out;
}

Result<search::ProposalSpace> RewriteProposer::Analyze(const std::string& source) {
  return ProposalSpaceOf(task_, kernel_, source);
}

}  // namespace kiln::app
