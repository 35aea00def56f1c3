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
    else
      tc.params[k] = v;
  }
  return tc;
}

}  // namespace

Result<std::string> RewriteRenderer::Render(const Config& c) {
  rewrite::SetParams sp;
  for (const auto& [k, v] : c) sp.values[k] = v;
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, {rewrite::Request(sp)});
  if (!r.ok()) return r.status();
  return r->source;
}

Result<std::string> RewriteRenderer::RenderPerShape(const Config& winner, const Config& baseline) {
  // An autotuned original keeps its own configs (the baseline config kiln searched from is only one
  // of them) and gains the winner in front.
  rewrite::InsertAutotune ext;
  ext.keep_existing = true;
  ext.configs.push_back(ToTuneConfig(winner));
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, {rewrite::Request(ext)});
  if (r.ok())
    for (const auto& n : r->notes)
      if (n.find("in front of the existing autotune configs") != std::string::npos) return r->source;
  return RenderAutotune({winner, baseline});
}

Result<std::string> RewriteRenderer::RenderAutotune(const std::vector<Config>& configs) {
  rewrite::InsertAutotune at;
  for (const auto& c : configs) at.configs.push_back(ToTuneConfig(c));
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, {rewrite::Request(at)});
  if (!r.ok()) return r.status();
  return r->source;
}

}  // namespace kiln::app
