#include "profile/profile.h"

#include <fmt/format.h>

#include "common/file.h"
#include "profile/metrics.h"

namespace kiln::profile {

using nlohmann::json;

namespace {

std::optional<int> OptInt(const json& j, const char* k) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return static_cast<int>(it->get<double>());
}

}  // namespace

Result<std::vector<KernelFacts>> KernelFactsFromJson(const json& j) {
  const json* arr = &j;
  if (j.is_object()) {
    auto it = j.find("kernels");
    if (it == j.end()) return ParseError("facts JSON has no \"kernels\" array");
    arr = &*it;
  }
  if (!arr->is_array()) return ParseError("facts \"kernels\" is not an array");
  std::vector<KernelFacts> out;
  for (const auto& k : *arr) {
    if (!k.is_object() || !k.contains("name") || !k["name"].is_string()) {
      return ParseError("each kernel fact needs a string \"name\"");
    }
    KernelFacts f;
    f.name = k["name"].get<std::string>();
    f.n_regs = OptInt(k, "n_regs");
    f.n_spills = OptInt(k, "n_spills");
    f.shared_bytes = OptInt(k, "shared_bytes");
    f.num_warps = OptInt(k, "num_warps");
    f.num_stages = OptInt(k, "num_stages");
    if (auto it = k.find("grid"); it != k.end() && it->is_array()) {
      for (const auto& g : *it) {
        if (g.is_number()) f.grid.push_back(g.get<int>());
      }
    }
    if (auto it = k.find("constexprs"); it != k.end() && it->is_object()) {
      for (auto& [n, v] : it->items()) f.constexprs[n] = v;
    }
    f.has_dot = k.value("has_dot", false);
    f.fp32_dot_without_tensor_cores = k.value("fp32_dot_without_tensor_cores", false);
    if (f.fp32_dot_without_tensor_cores) f.has_dot = true;
    out.push_back(std::move(f));
  }
  return out;
}

json ToJson(const KernelFacts& f) {
  json j{{"name", f.name}};
  auto put = [&](const char* k, const std::optional<int>& v) {
    if (v) j[k] = *v;
  };
  put("n_regs", f.n_regs);
  put("n_spills", f.n_spills);
  put("shared_bytes", f.shared_bytes);
  put("num_warps", f.num_warps);
  put("num_stages", f.num_stages);
  if (!f.grid.empty()) j["grid"] = f.grid;
  if (!f.constexprs.empty()) j["constexprs"] = f.constexprs;
  j["has_dot"] = f.has_dot;
  j["fp32_dot_without_tensor_cores"] = f.fp32_dot_without_tensor_cores;
  return j;
}

ProfileRun BuildProfileRun(const NcuReport& report, const std::vector<KernelFacts>& facts,
                           const std::optional<DeviceRecord>& device) {
  ProfileRun run;
  run.device = device;
  run.ncu_messages = report.messages;
  const DevicePeaks* peaks = device ? &device->peaks : nullptr;
  for (const auto& row : report.kernels) {
    KernelProfile kp;
    kp.row = row;
    kp.roofline = ComputeRoofline(row, peaks);
    for (const auto& f : facts) {
      if (f.name == row.name) kp.facts = f;
    }
    run.total_seconds += kp.roofline.seconds;
    run.kernels.push_back(std::move(kp));
  }
  for (auto& k : run.kernels) {
    k.time_share = run.total_seconds > 0 ? k.roofline.seconds / run.total_seconds
                                         : 1.0 / static_cast<double>(run.kernels.size());
  }
  return run;
}

Result<ProfileRun> ProfileFromCsv(const std::string& csv_path, const std::vector<KernelFacts>& facts,
                                  const std::optional<DeviceRecord>& device) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(csv_path));
  auto report = ParseNcuRawCsv(text);
  if (!report.ok()) return ParseError(fmt::format("{}: {}", csv_path, report.status().message()));
  if (report->kernels.empty()) {
    return NotFound(fmt::format("{}: the CSV has a header but no profiled kernel rows", csv_path));
  }
  ProfileRun run = BuildProfileRun(*report, facts, device);
  run.source = "csv:" + csv_path;
  return run;
}

}  // namespace kiln::profile
