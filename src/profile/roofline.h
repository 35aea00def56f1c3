// kiln/profile: the roofline of one profiled kernel against the device's MEASURED roofs.
//
// From the counters: achieved FLOPs per dtype (CUDA-core SASS instruction counts and tensor-core
// operation counts, see metrics.h), DRAM bytes (read + write), the duration. Then per dtype:
//   arithmetic intensity AI = FLOPs / DRAM bytes,
//   attainable = min(peak_flops(dtype), AI * peak_bw),
//   fraction of roof = achieved FLOP/s / attainable,
// and the memory side (achieved DRAM bytes/s / measured peak bandwidth) and compute side
// (achieved FLOP/s / measured peak of the dtype). A kernel with no FLOPs (a copy) has only the
// memory side. The "main" dtype is the one with most FLOPs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/device.h"
#include "profile/ncu_csv.h"

namespace kiln::profile {

struct DtypeRoof {
  std::string dtype;          // "bfloat16", "float32", ...
  double flops = 0;           // achieved FLOPs in the launch
  double flops_per_s = 0;
  double peak_flops_per_s = 0;  // measured (or derived) peak; 0 when unknown
  double ai = 0;              // FLOP / DRAM byte (0 when no DRAM bytes)
  double attainable_flops_per_s = 0;
  double fraction_of_roof = 0;   // flops_per_s / attainable
  double compute_fraction = 0;   // flops_per_s / peak
  bool tensor = false;
};

struct Roofline {
  bool valid = false;          // duration known
  double seconds = 0;
  double dram_bytes = 0;
  double dram_bytes_per_s = 0;
  double peak_dram_bytes_per_s = 0;  // 0 when no device peaks
  double memory_fraction = 0;  // dram_bytes_per_s / peak
  std::vector<DtypeRoof> dtypes;  // sorted by FLOPs, largest first
  double total_flops = 0;
  // The headline: the main dtype's fraction of its roof, or the memory fraction for a kernel
  // without FLOPs. "memory" or "compute": which roof bounds the point (AI vs the ridge point).
  double fraction_of_roof = 0;
  std::string bound_by;        // "memory", "compute", "" (unknown)
  const DtypeRoof* main() const { return dtypes.empty() ? nullptr : &dtypes.front(); }
};

// `peaks` may be null (no device characterization): the fractions are then 0 and bound_by "".
Roofline ComputeRoofline(const NcuKernelRow& row, const DevicePeaks* peaks);

nlohmann::json ToJson(const Roofline& r);

}  // namespace kiln::profile
