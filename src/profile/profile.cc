#include "profile/profile.h"

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
