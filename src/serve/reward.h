// kiln/serve: reward formulas (docs/serve.md, "Rewards"). Every preset is one weight set of a single
// formula over an item's components:
//
//   S = clip(speedup - speedup_offset, speedup_min, speedup_cap)      (0 when no speedup was measured)
//   reward = gate * (w_format*format + w_compiled*compiled
//                    + correct*(w_correct + w_speedup*S + w_coverage*coverage)) + w_hacked*hacked
//
// gate is the rule-based gate (code extracted and a launched @triton.jit kernel; 1 when the formula
// does not require it), correct is verdict ok, compiled is verdict ok or mismatch (the kernel ran to
// outputs), hacked is verdict rejected (kiln's anti-hacking checks, including decoy kernels that are
// never launched and torch doing the work); coverage is the candidate's own share of the work
// (attribution own_share: GPU time by the profiler on a GPU, launches by the dispatcher otherwise; 0
// when not reported).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::serve {

struct RewardFormula {
  std::string name = "autotriton";
  bool require_gate = true;
  double w_format = 0, w_compiled = 0, w_correct = 1, w_speedup = 0, w_coverage = 0, w_hacked = 0;
  double speedup_offset = 0, speedup_min = 0, speedup_cap = 10;
  nlohmann::json ToJson() const;
};

// Presets: autotriton, kevin, drkernel. Errors name the presets.
Result<RewardFormula> Preset(const std::string& name);
// A formula from JSON: a preset name, or {"preset": NAME (default autotriton), weights...}; unknown
// keys are errors (a typo must not silently change a reward).
Result<RewardFormula> FormulaFromJson(const nlohmann::json& j);
// --reward NAME or a JSON config file holding such an object.
Result<RewardFormula> LoadFormula(const std::string& name_or_file);

struct Components {
  bool has_code = false, format = false, gate = false, compiled = false, correct = false, hacked = false;
  std::optional<double> speedup;
  std::optional<double> coverage;  // the candidate's own share of the work, 0..1
  nlohmann::json ToJson() const;
};

double Reward(const RewardFormula& f, const Components& c);

// GRPO's group-normalised advantages (as verl's GRPO outcome advantage): (r - mean) / (std + 1e-6)
// with the unbiased standard deviation; a group of one gets 0. nullopt rewards (infrastructure
// failures) take no part and get nullopt.
std::vector<std::optional<double>> GroupAdvantages(const std::vector<std::optional<double>>& rewards);

}  // namespace kiln::serve
