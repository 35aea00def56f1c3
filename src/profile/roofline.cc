#include "profile/roofline.h"

#include <algorithm>

#include "profile/metrics.h"

namespace kiln::profile {

Roofline ComputeRoofline(const NcuKernelRow& row, const DevicePeaks* peaks) {
  Roofline r;
  auto dur = row.Get(metric::kDuration);
  r.seconds = dur.value_or(0);
  r.valid = r.seconds > 0;
  r.dram_bytes = row.GetOr(metric::kDramBytesRead, 0) + row.GetOr(metric::kDramBytesWrite, 0);
  if (r.valid) r.dram_bytes_per_s = r.dram_bytes / r.seconds;
  if (peaks) {
    r.peak_dram_bytes_per_s = peaks->dram_bytes_per_s;
    if (r.peak_dram_bytes_per_s > 0) r.memory_fraction = r.dram_bytes_per_s / r.peak_dram_bytes_per_s;
  }
  std::map<std::string, DtypeRoof> by;
  for (const auto& fc : metric::FlopCounters()) {
    auto v = row.Get(fc.metric);
    if (!v || *v <= 0) continue;
    auto& d = by[fc.dtype];
    d.dtype = fc.dtype;
    d.flops += *v * fc.flops_per_unit;
    d.tensor = d.tensor || fc.tensor;
  }
  for (auto& [k, d] : by) {
    r.total_flops += d.flops;
    if (r.valid) d.flops_per_s = d.flops / r.seconds;
    if (r.dram_bytes > 0) d.ai = d.flops / r.dram_bytes;
    if (peaks) d.peak_flops_per_s = peaks->FlopsFor(k);
    if (d.peak_flops_per_s > 0) {
      d.compute_fraction = d.flops_per_s / d.peak_flops_per_s;
      d.attainable_flops_per_s = r.dram_bytes > 0 && r.peak_dram_bytes_per_s > 0
                                     ? std::min(d.peak_flops_per_s, d.ai * r.peak_dram_bytes_per_s)
                                     : d.peak_flops_per_s;
      if (d.attainable_flops_per_s > 0) d.fraction_of_roof = d.flops_per_s / d.attainable_flops_per_s;
    }
    r.dtypes.push_back(d);
  }
  std::sort(r.dtypes.begin(), r.dtypes.end(),
            [](const DtypeRoof& a, const DtypeRoof& b) { return a.flops > b.flops; });
  if (!peaks) return r;
  const DtypeRoof* m = r.main();
  // A kernel counts as computing when its FLOPs matter: at least 1 FLOP per 4 DRAM bytes, or any
  // tensor-core work. Below that (copies, elementwise with a few ops) the memory roof is the story.
  bool computes = m && m->peak_flops_per_s > 0 &&
                  (m->tensor || r.dram_bytes <= 0 || m->ai >= 0.25);
  if (computes) {
    double ridge = r.peak_dram_bytes_per_s > 0 ? m->peak_flops_per_s / r.peak_dram_bytes_per_s : 0;
    r.bound_by = (r.dram_bytes > 0 && m->ai < ridge) ? "memory" : "compute";
    r.fraction_of_roof = m->fraction_of_roof;
  } else if (r.peak_dram_bytes_per_s > 0 && r.valid) {
    r.bound_by = "memory";
    r.fraction_of_roof = r.memory_fraction;
  }
  return r;
}

nlohmann::json ToJson(const Roofline& r) {
  nlohmann::json dts = nlohmann::json::array();
  for (const auto& d : r.dtypes) {
    dts.push_back({{"dtype", d.dtype},
                   {"tensor", d.tensor},
                   {"flops", d.flops},
                   {"flops_per_s", d.flops_per_s},
                   {"peak_flops_per_s", d.peak_flops_per_s},
                   {"arithmetic_intensity", d.ai},
                   {"attainable_flops_per_s", d.attainable_flops_per_s},
                   {"fraction_of_roof", d.fraction_of_roof},
                   {"compute_fraction", d.compute_fraction}});
  }
  return {{"seconds", r.seconds},
          {"dram_bytes", r.dram_bytes},
          {"dram_bytes_per_s", r.dram_bytes_per_s},
          {"peak_dram_bytes_per_s", r.peak_dram_bytes_per_s},
          {"memory_fraction", r.memory_fraction},
          {"total_flops", r.total_flops},
          {"fraction_of_roof", r.fraction_of_roof},
          {"bound_by", r.bound_by},
          {"dtypes", dts}};
}

}  // namespace kiln::profile
