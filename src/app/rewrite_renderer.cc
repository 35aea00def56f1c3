#include "app/rewrite_renderer.h"

#include <cmath>

#include "rewrite/rewrite.h"

namespace kiln::app {

using search::Config;

namespace {

// The constexpr that switches the streaming-load hint per config when the configs of one module differ
// in it (rewrite::EvictionHints::switch_param).
constexpr const char* kEvictSwitch = "KILN_EVICT_FIRST";

bool EvictFirst(const Config& c) {
  auto it = c.find(search::kEvictFirstParam);
  return it != c.end() && it->second != 0;
}

// `switched`: the hint is a kernel constexpr, set in every config (1 or 0).
rewrite::TuneConfig ToTuneConfig(const Config& c, bool switched = false) {
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
  if (switched) tc.params[kEvictSwitch] = EvictFirst(c) ? 1 : 0;
  return tc;
}

// The hint on every streaming load, or (`switched`) on those of the configs that set kEvictSwitch.
rewrite::Request EvictFirstRequest(bool switched = false) {
  rewrite::EvictionHints h;
  h.eviction_policy = "evict_first";
  if (switched) h.switch_param = kEvictSwitch;
  return rewrite::Request(h);
}

// How the streaming-load hint of configs rendered into one module is written.
enum class Evict { kNone, kAll, kSwitched };

Evict CommonEvictFirst(const std::vector<Config>& configs) {
  bool any = false, all = true;
  for (const auto& c : configs) {
    any |= EvictFirst(c);
    all &= EvictFirst(c);
  }
  return !any ? Evict::kNone : all ? Evict::kAll : Evict::kSwitched;
}

// A key value as a Python literal: only numbers and booleans (what a size key holds) are pinned.
Result<std::string> PythonScalar(const nlohmann::json& v) {
  if (v.is_boolean()) return std::string(v.get<bool>() ? "True" : "False");
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float() && std::isfinite(v.get<double>())) return v.dump();
  return InvalidArgument("autotune key value " + v.dump() + " is not a number");
}

// The pins as InsertAutotune holds them (a Python tuple per shape).
Status SetPins(const search::ShapePins& pins, rewrite::InsertAutotune* at) {
  if (pins.shapes.empty()) return Status::Ok();
  at->pin_names = pins.names;
  for (const auto& [values, first] : pins.shapes) {
    if (!values.is_array() || values.size() != pins.names.size())
      return InvalidArgument("a pinned shape does not have one value per key parameter");
    std::string t;
    for (const auto& v : values) {
      KILN_ASSIGN_OR_RETURN(std::string x, PythonScalar(v));
      t += (t.empty() ? "" : ", ") + x;
    }
    at->pins.emplace_back("(" + t + (values.size() == 1 ? ",)" : ")"), first);
  }
  return Status::Ok();
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

Result<std::string> RewriteRenderer::RenderPerShape(const Config& winner, const Config& baseline,
                                                    const search::ShapePins& pins) {
  // An autotuned original keeps its own configs (the baseline config kiln searched from is only one
  // of them) and gains the winner in front.
  // The existing configs do not set the switch: they run the original's loads (its default 0).
  const Evict evict = CommonEvictFirst({winner, baseline});
  const bool switched = evict == Evict::kSwitched;
  rewrite::InsertAutotune ext;
  ext.keep_existing = true;
  ext.configs.push_back(ToTuneConfig(winner, switched));
  KILN_RETURN_IF_ERROR(SetPins(pins, &ext));
  rewrite::Target t{kernel_, {}};
  std::vector<rewrite::Request> steps;
  if (evict != Evict::kNone) steps.push_back(EvictFirstRequest(switched));
  steps.push_back(rewrite::Request(ext));
  auto r = rewrite::ApplySequence(source_, path_, t, steps);
  if (r.ok())
    for (const auto& n : r->notes)
      if (n.find("in front of the existing autotune configs") != std::string::npos) return r->source;
  return RenderAutotune({winner, baseline}, pins);
}

Result<std::string> RewriteRenderer::RenderAutotune(const std::vector<Config>& configs) {
  return RenderAutotune(configs, {});
}

Result<std::string> RewriteRenderer::RenderAutotune(const std::vector<Config>& configs, const search::ShapePins& pins) {
  const Evict evict = CommonEvictFirst(configs);
  const bool switched = evict == Evict::kSwitched;
  rewrite::InsertAutotune at;
  for (const auto& c : configs) at.configs.push_back(ToTuneConfig(c, switched));
  KILN_RETURN_IF_ERROR(SetPins(pins, &at));
  rewrite::Target t{kernel_, {}};
  std::vector<rewrite::Request> steps;
  if (evict != Evict::kNone) steps.push_back(EvictFirstRequest(switched));
  steps.push_back(rewrite::Request(at));
  auto r = rewrite::ApplySequence(source_, path_, t, steps);
  if (!r.ok()) return r.status();
  return r->source;
}

}  // namespace kiln::app
