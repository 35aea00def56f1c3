// kiln/app: the tuning loop's Profiler: profile::ProfileTask (ncu on one case of the task), the
// static facts of the profiled source joined on (facts_join.h, as `kiln profile` does), then
// diagnose::DiagnoseRun; the tuned kernel's roofline fraction, class and findings, converted to the
// search's FindingView with the moves in the search's vocabulary.
#pragma once

#include <optional>
#include <string>

#include "diagnose/findings.h"
#include "profile/device.h"
#include "search/interfaces.h"

namespace kiln::app {

class NcuProfiler : public search::Profiler {
 public:
  NcuProfiler(std::string kernel, std::optional<profile::DeviceRecord> device, std::string python,
              std::string ncu_path = "")
      : kernel_(std::move(kernel)),
        device_(std::move(device)),
        python_(std::move(python)),
        ncu_path_(std::move(ncu_path)) {}
  Status Available() override;
  Result<search::ProfileSummary> Profile(const task::TaskSpec& task, const std::optional<std::string>& source,
                                         const std::string& case_name) override;
  void LimitSeconds(double seconds) override { limit_s_ = seconds; }
  void SeedAutotune(const nlohmann::json& picks) override { picks_ = picks; }

 private:
  double limit_s_ = 0;  // > 0: ncu's timeout is cut to it (the loop's hard end)
  nlohmann::json picks_ = nlohmann::json::array();  // autotune picks for the profiled worker (SeedAutotune)
  std::string kernel_;
  std::optional<profile::DeviceRecord> device_;
  std::string python_, ncu_path_;
};

// Moves named by the diagnosis (diagnose::MoveName) in the search's vocabulary.
std::string SearchMoveName(const std::string& diagnose_move);
// A diagnose::Finding as the search sees it.
search::FindingView ToFindingView(const diagnose::Finding& f);

}  // namespace kiln::app
