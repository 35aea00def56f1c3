#include "serve/reward.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/file.h"
#include "common/json.h"

namespace kiln::serve {

using nlohmann::json;

json RewardFormula::ToJson() const {
  return {{"name", name},
          {"require_gate", require_gate},
          {"w_format", w_format},
          {"w_compiled", w_compiled},
          {"w_correct", w_correct},
          {"w_speedup", w_speedup},
          {"w_coverage", w_coverage},
          {"w_hacked", w_hacked},
          {"speedup_offset", speedup_offset},
          {"speedup_min", speedup_min},
          {"speedup_cap", speedup_cap}};
}

Result<RewardFormula> Preset(const std::string& name) {
  RewardFormula f;
  f.name = name;
  if (name == "autotriton") return f;  // gate * correct
  if (name == "kevin") {               // 0.3 * correct + speedup (when correct)
    f.w_correct = 0.3;
    f.w_speedup = 1;
    return f;
  }
  if (name == "drkernel") {  // correct * (0.5 + 0.5 * min(speedup, 3) + 0.5 * coverage): KernelGYM's release
    f.w_correct = 0.5;
    f.w_speedup = 0.5;
    f.speedup_cap = 3;
    f.w_coverage = 0.5;
    return f;
  }
  return InvalidArgument(fmt::format("unknown reward preset '{}' (known: autotriton, kevin, drkernel)", name));
}

Result<RewardFormula> FormulaFromJson(const json& j) {
  if (j.is_string()) return Preset(j.get<std::string>());
  if (!j.is_object()) return InvalidArgument("reward: expected a preset name or an object");
  std::string base = "autotriton";
  if (j.contains("preset")) {
    if (!j["preset"].is_string()) return InvalidArgument("reward.preset: expected a string");
    base = j["preset"].get<std::string>();
  }
  KILN_ASSIGN_OR_RETURN(RewardFormula f, Preset(base));
  f.name = j.contains("preset") && j.size() == 1 ? base : "custom:" + base;
  for (const auto& [k, v] : j.items()) {
    if (k == "preset") continue;
    if (k == "require_gate") {
      if (!v.is_boolean()) return InvalidArgument("reward.require_gate: expected true or false");
      f.require_gate = v.get<bool>();
      continue;
    }
    double* slot = k == "w_format"         ? &f.w_format
                   : k == "w_compiled"     ? &f.w_compiled
                   : k == "w_correct"      ? &f.w_correct
                   : k == "w_speedup"      ? &f.w_speedup
                   : k == "w_coverage"     ? &f.w_coverage
                   : k == "w_hacked"       ? &f.w_hacked
                   : k == "speedup_offset" ? &f.speedup_offset
                   : k == "speedup_min"    ? &f.speedup_min
                   : k == "speedup_cap"    ? &f.speedup_cap
                                           : nullptr;
    if (!slot) return InvalidArgument(fmt::format("reward: unknown key '{}'", k));
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      return InvalidArgument(fmt::format("reward.{}: expected a finite number", k));
    *slot = v.get<double>();
  }
  if (f.speedup_min > f.speedup_cap) return InvalidArgument("reward: speedup_min is above speedup_cap");
  return f;
}

Result<RewardFormula> LoadFormula(const std::string& name_or_file) {
  if (name_or_file.size() < 5 || name_or_file.substr(name_or_file.size() - 5) != ".json") return Preset(name_or_file);
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(name_or_file));
  json j = ParseJson(text);
  if (j.is_discarded()) return InvalidArgument(fmt::format("{}:1:1: error: not valid JSON", name_or_file));
  auto f = FormulaFromJson(j);
  if (!f.ok()) return InvalidArgument(fmt::format("{}:1:1: error: {}", name_or_file, f.status().message()));
  return f;
}

json Components::ToJson() const {
  return {{"has_code", has_code},
          {"format", format ? 1 : 0},
          {"gate", gate ? 1 : 0},
          {"compiled", compiled ? 1 : 0},
          {"correct", correct ? 1 : 0},
          {"hacked", hacked ? 1 : 0},
          {"speedup", speedup ? json(*speedup) : json(nullptr)},
          {"coverage", coverage ? json(*coverage) : json(nullptr)}};
}

double Reward(const RewardFormula& f, const Components& c) {
  const double gate = !f.require_gate || c.gate ? 1 : 0;
  double s = 0;
  if (c.speedup && std::isfinite(*c.speedup))
    s = std::clamp(*c.speedup - f.speedup_offset, f.speedup_min, f.speedup_cap);
  double cov = 0;
  if (c.coverage && std::isfinite(*c.coverage)) cov = std::clamp(*c.coverage, 0.0, 1.0);
  const double body = f.w_format * c.format + f.w_compiled * c.compiled +
                      (c.correct ? f.w_correct + f.w_speedup * s + f.w_coverage * cov : 0);
  return gate * body + f.w_hacked * (c.hacked ? 1 : 0);
}

std::vector<std::optional<double>> GroupAdvantages(const std::vector<std::optional<double>>& rewards) {
  std::vector<double> xs;
  for (const auto& r : rewards)
    if (r) xs.push_back(*r);
  std::vector<std::optional<double>> out(rewards.size());
  if (xs.empty()) return out;
  double mean = 0;
  for (double x : xs) mean += x;
  mean /= xs.size();
  double var = 0;
  for (double x : xs) var += (x - mean) * (x - mean);
  const double sd = xs.size() > 1 ? std::sqrt(var / (xs.size() - 1)) : 0;
  for (size_t i = 0; i < rewards.size(); ++i)
    if (rewards[i]) out[i] = xs.size() > 1 ? (*rewards[i] - mean) / (sd + 1e-6) : 0.0;
  return out;
}

}  // namespace kiln::serve
