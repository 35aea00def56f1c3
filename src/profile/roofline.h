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
//
// Two corrections from real H200 recordings:
//  * The CUDA-core float32 roof is max(measured float32 matmul, the FP32 pipe peak) where the pipe
//    peak = SMs x FP32 lanes per SM (by compute capability) x 2 FLOP x the kernel's SM clock
//    (sm__cycles_elapsed.avg.per_second), which is Nsight Compute's own roof. A measured sgemm
//    reaches only ~77% of it on Hopper, and an FMA-chain kernel at 74% of the pipe otherwise read
//    as "96% of the float32 roof". float64 and CUDA-core float16 roofs derive from this one.
//  * A measured roof is a practical one (a D2D copy, a cuBLAS matmul): a kernel can exceed it
//    (vec_add's 2:1 read:write mix reaches 102% of the copy's bandwidth). fraction_of_roof is
//    capped at 1 and the uncapped value kept (fraction_of_roof_measured, above_measured_roof).
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
  std::string dtype;  // "bfloat16", "float32", ...
  double flops = 0;   // achieved FLOPs in the launch
  double flops_per_s = 0;
  double peak_flops_per_s = 0;  // measured (or derived) peak; 0 when unknown
  // Where the peak comes from: "measured" (device record), "derived" (from another measured
  // dtype), "fp32_pipe" (SMs x lanes x 2 x clock, above the measured one), "" when unknown.
  std::string peak_source;
  double ai = 0;  // FLOP / DRAM byte (0 when no DRAM bytes)
  double attainable_flops_per_s = 0;
  double fraction_of_roof = 0;  // flops_per_s / attainable, capped at 1
  double compute_fraction = 0;  // flops_per_s / peak (uncapped)
  bool tensor = false;
};

struct Roofline {
  bool valid = false;  // duration known
  double seconds = 0;
  double dram_bytes = 0;
  double dram_bytes_per_s = 0;
  double peak_dram_bytes_per_s = 0;  // 0 when no device peaks
  double memory_fraction = 0;        // dram_bytes_per_s / peak
  std::vector<DtypeRoof> dtypes;     // sorted by FLOPs, largest first
  double total_flops = 0;
  // The headline: the main dtype's fraction of its roof, or the memory fraction for a kernel
  // without FLOPs. "memory" or "compute": which roof bounds the point (AI vs the ridge point).
  double fraction_of_roof = 0;           // capped at 1
  double fraction_of_roof_measured = 0;  // uncapped: > 1 when the measured roof is exceeded
  bool above_measured_roof = false;      // the kernel beats the measured (practical) roof
  std::string bound_by;                  // "memory", "compute", "" (unknown)
  const DtypeRoof* main() const { return dtypes.empty() ? nullptr : &dtypes.front(); }
};

// FP32 lanes per SM for a compute capability ("9.0"): 64 on 7.x and 8.0, 128 on 8.6+/9.x/10.x/12.x;
// 0 when unknown.
int Fp32LanesPerSm(const std::string& cc);
// The CUDA-core float32 pipe peak of the kernel's launch: SMs x lanes x 2 x SM clock (the row's
// sm__cycles_elapsed.avg.per_second, else the device's max clock); 0 when the row lacks them.
double Fp32PipePeakFlops(const NcuKernelRow& row);

// `peaks` may be null (no device characterization): the fractions are then 0 and bound_by "".
Roofline ComputeRoofline(const NcuKernelRow& row, const DevicePeaks* peaks);

nlohmann::json ToJson(const Roofline& r);

}  // namespace kiln::profile
