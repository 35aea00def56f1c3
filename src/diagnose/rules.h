// kiln/diagnose: rules: counters + compile facts + static facts -> a class and findings.
//
// First the top-level class (Nsight Compute's Speed-of-Light logic, with the measured roofline):
//   at_roofline     the kernel reaches >= 95% of its measured roof (or SOL >= 95% without peaks):
//                   stop optimizing it; nothing else is reported.
//   small_grid      SM and memory throughput both < 60% and waves per SM < 1.
//   latency_bound   SM and memory throughput both < 60%.
//   memory_bound    memory throughput >= SM throughput + 10 points.
//   compute_bound   SM throughput >= memory throughput + 10 points.
//   balanced        both >= 60% and within 10 points of each other.
// ">= 80% -> near its roof" colours the message and severity of the class finding.
//
// Then the detail rules, each GATED by the class (see AllowedIn) so that advice never contradicts
// the class: a memory-bound kernel is never told its compute pipes are the problem, a
// compute-bound one is never told about occupancy or coalescing, a small grid is never told about
// occupancy or tail waves. Finally, moves that contradict a higher-priority finding's moves
// (bigger vs smaller tiles, more vs fewer warps/stages) are removed, so one diagnosis never
// suggests both directions.
//
// Thresholds (Thresholds below; defaults from Nsight Compute's rules and the design notes):
//   theoretical occupancy < 80%  -> occupancy_limited_{registers,shared_memory,blocks,warps}
//   achieved occupancy more than 10 points under theoretical -> achieved_below_theoretical_occupancy
//   one stall reason > 30% of stall cycles while issue active < 0.8 -> dominant_stall_<reason>
//   spilled registers > 0 (compile facts) or local-memory instructions > 0 -> register_spills
//   partial last wave costing >= 10% (waves >= 1)        -> partial_last_wave
//   shared-memory bank conflicts >= 10% of wavefronts    -> shared_bank_conflicts
//   < 60% of each fetched global sector used by loads/stores -> uncoalesced_global_access
//     (stores only when they are >= 5% of the global sectors, or of the DRAM bytes)
// The memory-bound class names the busy unit (L2 or L1 when it is 10+ points above DRAM), leads
// with coalescing when accesses waste sectors, and does not suggest bigger tiles to a kernel that
// spills. A small grid that runs under 5 us is told to fuse, not to split. register_spills ranks
// first among the detail rules when moves conflict.
//   static fact fp32 tl.dot without tensor cores (tensor pipe < 5%) -> fp32_dot_without_tensor_cores
//   duration < 5 us                                       -> launch_bound_tiny_kernel
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/findings.h"
#include "profile/profile.h"

namespace kiln::diagnose {

enum class BoundClass { kAtRoofline, kMemoryBound, kComputeBound, kBalanced, kLatencyBound, kSmallGrid, kUnknown };
const char* ClassName(BoundClass c);

struct Thresholds {
  double at_roof_fraction = 0.95;  // of the measured roof
  double at_roof_sol_pct = 95;     // SOL fallback when no device peaks are known
  double latency_pct = 60;         // both SM and memory throughput below -> latency-bound
  double bound_gap_pts = 10;       // one side this many points above the other -> that bound
  double near_roof_pct = 80;       // "near its roof"
  double theoretical_occupancy_pct = 80;
  double achieved_gap_pts = 10;
  double stall_share = 0.30;          // of all stall cycles (excluding "selected")
  double stall_issue_active = 0.8;    // only when issue active per cycle is below this
  double tail_loss = 0.10;            // fraction of runtime a partial last wave may waste
  double bank_conflict_ratio = 0.10;  // conflicts / shared wavefronts
  double sector_use_pct = 60;         // bytes used per fetched sector, percent
  double store_share = 0.05;          // stores below this share of the traffic are not judged
  double tensor_idle_pct = 5;         // tensor pipe below this counts as unused
  double tiny_kernel_s = 5e-6;        // launch overhead from Python is ~4-5 us
  double many_waves = 8;              // many_small_programs: at least this many waves of programs
  double small_program_bytes = 4096;  // ... each moving at most this many global bytes
};

struct Diagnosis {
  std::string kernel;
  BoundClass cls = BoundClass::kUnknown;
  std::vector<Finding> findings;             // the class finding first, then by severity
  std::vector<std::string> gated;            // rules that fired but were suppressed by the class
  std::vector<std::string> missing_metrics;  // metrics a rule needed but the CSV lacks
};

// Which detail rules a class allows. Exposed for tests and docs.
bool AllowedIn(BoundClass cls, const std::string& rule);

Diagnosis Diagnose(const profile::KernelProfile& kp, const Thresholds& t = {});

nlohmann::json ToJson(const Diagnosis& d);

}  // namespace kiln::diagnose
