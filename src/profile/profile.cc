#include "profile/profile.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/file.h"
#include "profile/metrics.h"

namespace kiln::profile {

using nlohmann::json;

ProfileRun BuildProfileRun(const NcuReport& report, const std::vector<exec::KernelFacts>& facts,
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
    k.time_share =
        run.total_seconds > 0 ? k.roofline.seconds / run.total_seconds : 1.0 / static_cast<double>(run.kernels.size());
  }
  return run;
}

bool KeepOwnKernels(const std::vector<std::string>& own, ProfileRun* run) {
  auto is_own = [&](const KernelProfile& k) { return std::find(own.begin(), own.end(), k.name()) != own.end(); };
  if (std::none_of(run->kernels.begin(), run->kernels.end(), is_own)) return false;
  std::vector<KernelProfile> kept;
  run->total_seconds = 0;
  for (auto& k : run->kernels) {
    if (!is_own(k)) {
      run->skipped_kernels.push_back(k.name());
      continue;
    }
    run->total_seconds += k.roofline.seconds;
    kept.push_back(std::move(k));
  }
  for (auto& k : kept) {
    k.time_share =
        run->total_seconds > 0 ? k.roofline.seconds / run->total_seconds : 1.0 / static_cast<double>(kept.size());
  }
  run->kernels = std::move(kept);
  return true;
}

std::string ShortKernelName(const std::string& name) {
  // drop the parameter list and template arguments (balanced, from the end), then namespaces and return type
  std::string s;
  int depth = 0;
  for (char c : name) {
    if (c == '<' || c == '(') {
      ++depth;
    } else if ((c == '>' || c == ')') && depth > 0) {
      --depth;
    } else if (depth == 0) {
      s += c;
    }
  }
  if (auto colon = s.rfind("::"); colon != std::string::npos) s = s.substr(colon + 2);
  if (auto space = s.find_last_of(' '); space != std::string::npos) s = s.substr(space + 1);
  return s.empty() ? name : s;
}

Result<ProfileRun> ProfileFromCsv(const std::string& csv_path, const std::vector<exec::KernelFacts>& facts,
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
