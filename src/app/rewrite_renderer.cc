#include "app/rewrite_renderer.h"

#include "rewrite/rewrite.h"

namespace kiln::app {

using search::Config;

namespace {

rewrite::TuneConfig ToTuneConfig(const Config& c) {
  rewrite::TuneConfig tc;
  for (const auto& [k, v] : c) {
    if (k == "num_warps")
      tc.num_warps = static_cast<int>(v);
    else if (k == "num_stages")
      tc.num_stages = static_cast<int>(v);
    else if (k == "num_ctas")
      tc.num_ctas = static_cast<int>(v);
    else if (k == "maxnreg")
      tc.maxnreg = static_cast<int>(v);
    else if (k != search::kEvictFirstParam)  // a source move, not a value (below)
      tc.params[k] = v;
  }
  return tc;
}

bool EvictFirst(const Config& c) {
  auto it = c.find(search::kEvictFirstParam);
  return it != c.end() && it->second != 0;
}

rewrite::Request EvictFirstRequest() {
  rewrite::EvictionHints h;
  h.eviction_policy = "evict_first";
  return rewrite::Request(h);
}

// The streaming-load hint of a list of configs rendered into one module: all of them or none.
Result<bool> CommonEvictFirst(const std::vector<Config>& configs) {
  bool any = false, all = true;
  for (const auto& c : configs) {
    any |= EvictFirst(c);
    all &= EvictFirst(c);
  }
  if (any && !all)
    return InvalidArgument(std::string("the configs differ in the streaming-load hint (") + search::kEvictFirstParam +
                           "): one module cannot hold both");
  return any;
}

}  // namespace

Result<std::string> RewriteRenderer::Render(const Config& c) {
  rewrite::SetParams sp;
  for (const auto& [k, v] : c)
    if (k != search::kEvictFirstParam) sp.values[k] = v;
  std::vector<rewrite::Request> steps;
  if (!sp.values.empty()) steps.push_back(rewrite::Request(sp));
  if (EvictFirst(c)) steps.push_back(EvictFirstRequest());
  if (steps.empty()) return source_;
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, steps);
  if (!r.ok()) return r.status();
  return r->source;
}

Result<std::string> RewriteRenderer::RenderPerShape(const Config& winner, const Config& baseline) {
  // An autotuned original keeps its own configs (the baseline config kiln searched from is only one
  // of them) and gains the winner in front.
  KILN_ASSIGN_OR_RETURN(bool evict, CommonEvictFirst({winner, baseline}));
  rewrite::InsertAutotune ext;
  ext.keep_existing = true;
  ext.configs.push_back(ToTuneConfig(winner));
  rewrite::Target t{kernel_, {}};
  std::vector<rewrite::Request> steps;
  if (evict) steps.push_back(EvictFirstRequest());
  steps.push_back(rewrite::Request(ext));
  auto r = rewrite::ApplySequence(source_, path_, t, steps);
  if (r.ok())
    for (const auto& n : r->notes)
      if (n.find("in front of the existing autotune configs") != std::string::npos) return r->source;
  return RenderAutotune({winner, baseline});
}

Result<std::string> RewriteRenderer::RenderAutotune(const std::vector<Config>& configs) {
  KILN_ASSIGN_OR_RETURN(bool evict, CommonEvictFirst(configs));
  rewrite::InsertAutotune at;
  for (const auto& c : configs) at.configs.push_back(ToTuneConfig(c));
  rewrite::Target t{kernel_, {}};
  std::vector<rewrite::Request> steps;
  if (evict) steps.push_back(EvictFirstRequest());
  steps.push_back(rewrite::Request(at));
  auto r = rewrite::ApplySequence(source_, path_, t, steps);
  if (!r.ok()) return r.status();
  return r->source;
}

}  // namespace kiln::app
