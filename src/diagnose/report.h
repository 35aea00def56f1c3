// kiln/diagnose: reports of a profiled run: terminal text, JSON, and a self-contained HTML page.
//
// The HTML page needs no network: inline CSS, the roofline chart as inline SVG (log-log axes, the
// measured memory roof and one compute roof per dtype, each kernel's point per dtype), gauges for
// the Speed-of-Light and roofline fractions, the findings, and the full metric table per kernel.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/rules.h"
#include "profile/profile.h"

namespace kiln::diagnose {

struct ProfileReport {
  profile::ProfileRun run;
  std::vector<Diagnosis> diagnoses;  // one per run.kernels entry
};

ProfileReport DiagnoseRun(profile::ProfileRun run, const Thresholds& t = {});

std::string FormatText(const ProfileReport& r);
nlohmann::json ToJson(const ProfileReport& r);
std::string RenderHtml(const ProfileReport& r);

// The SVG roofline alone (used by RenderHtml; exposed for tests).
std::string RooflineSvg(const ProfileReport& r);

}  // namespace kiln::diagnose
