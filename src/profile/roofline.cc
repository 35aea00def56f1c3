#include "profile/roofline.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "profile/metrics.h"

namespace kiln::profile {

int Fp32LanesPerSm(const std::string& cc) {
  int major = 0, minor = 0;
  if (std::sscanf(cc.c_str(), "%d.%d", &major, &minor) < 1) return 0;
  if (major == 7 || (major == 8 && minor == 0)) return 64;
  if (major == 8 || major == 9 || major == 10 || major == 12) return 128;
  return 0;
}

double Fp32PipePeakFlops(const NcuKernelRow& row) {
  int lanes = Fp32LanesPerSm(row.cc);
  if (lanes == 0) {
    auto maj = row.Get("device__attribute_compute_capability_major");
    auto min = row.Get("device__attribute_compute_capability_minor");
    if (maj && min) lanes = Fp32LanesPerSm(fmt::format("{:.0f}.{:.0f}", *maj, *min));
  }
  double sms = row.GetOr(metric::kSmCount, row.GetOr("launch__sm_count", 0));
  double hz = row.GetOr(metric::kSmFrequency, 0);
  if (hz <= 0) hz = row.GetOr("device__attribute_max_gpu_frequency_khz", 0) * 1e3;
  if (lanes == 0 || sms <= 0 || hz <= 0) return 0;
  return sms * lanes * 2.0 * hz;
}

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
    if (fc.unless && row.Get(fc.unless)) continue;  // counted by the wider counter
    auto& d = by[fc.dtype];
    d.dtype = fc.dtype;
    d.flops += *v * fc.flops_per_unit;
    d.tensor = d.tensor || fc.tensor;
  }
  // The CUDA-core float32 roof: the FP32 pipe when it is above the measured float32 matmul.
  double pipe = peaks ? Fp32PipePeakFlops(row) : 0;
  double fp32_measured = peaks ? peaks->FlopsFor("float32") : 0;
  for (auto& [k, d] : by) {
    r.total_flops += d.flops;
    if (r.valid) d.flops_per_s = d.flops / r.seconds;
    if (r.dram_bytes > 0) d.ai = d.flops / r.dram_bytes;
    if (peaks) {
      d.peak_flops_per_s = peaks->FlopsFor(k);
      auto it = peaks->matmul_flops_per_s.find(k);
      d.peak_source = d.peak_flops_per_s <= 0                                     ? ""
                      : (it != peaks->matmul_flops_per_s.end() && it->second > 0) ? "measured"
                                                                                  : "derived";
      // float32, float64 and float16 on CUDA cores scale with the FP32 pipe (x1, x1/2, x2 as in
      // FlopsFor) when the pipe is above the measured float32 matmul.
      double scale = k == "float32" ? 1.0 : k == "float64" ? 0.5 : k == "float16_cuda" ? 2.0 : 0.0;
      if (!d.tensor && scale > 0 && pipe > fp32_measured) {
        d.peak_flops_per_s = pipe * scale;
        d.peak_source = "fp32_pipe";
      }
    }
    if (d.peak_flops_per_s > 0) {
      d.compute_fraction = d.flops_per_s / d.peak_flops_per_s;
      d.attainable_flops_per_s = r.dram_bytes > 0 && r.peak_dram_bytes_per_s > 0
                                     ? std::min(d.peak_flops_per_s, d.ai * r.peak_dram_bytes_per_s)
                                     : d.peak_flops_per_s;
      if (d.attainable_flops_per_s > 0) {
        d.fraction_of_roof = std::min(1.0, d.flops_per_s / d.attainable_flops_per_s);
      }
    }
    r.dtypes.push_back(d);
  }
  std::sort(r.dtypes.begin(), r.dtypes.end(), [](const DtypeRoof& a, const DtypeRoof& b) { return a.flops > b.flops; });
  if (!peaks) return r;
  const DtypeRoof* m = r.main();
  // A kernel counts as computing when its FLOPs matter: at least 1 FLOP per 4 DRAM bytes, or any
  // tensor-core work. Below that (copies, elementwise with a few ops) the memory roof is the story.
  bool computes = m && m->peak_flops_per_s > 0 && (m->tensor || r.dram_bytes <= 0 || m->ai >= 0.25);
  if (computes) {
    double ridge = r.peak_dram_bytes_per_s > 0 ? m->peak_flops_per_s / r.peak_dram_bytes_per_s : 0;
    r.bound_by = (r.dram_bytes > 0 && m->ai < ridge) ? "memory" : "compute";
    r.fraction_of_roof_measured = m->attainable_flops_per_s > 0 ? m->flops_per_s / m->attainable_flops_per_s : 0;
  } else if (r.peak_dram_bytes_per_s > 0 && r.valid) {
    r.bound_by = "memory";
    r.fraction_of_roof_measured = r.memory_fraction;
  }
  r.above_measured_roof = r.fraction_of_roof_measured > 1.0;
  r.fraction_of_roof = std::min(1.0, r.fraction_of_roof_measured);
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
                   {"peak_source", d.peak_source},
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
          {"fraction_of_roof_measured", r.fraction_of_roof_measured},
          {"above_measured_roof", r.above_measured_roof},
          {"bound_by", r.bound_by},
          {"dtypes", dts}};
}

}  // namespace kiln::profile
