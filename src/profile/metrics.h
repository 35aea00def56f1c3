// kiln/profile: the Nsight Compute metric list kiln collects, and the names the rest of kiln reads.
//
// The list starts from the design notes (ncu 2025.3.1, Hopper) and adds the counters needed for
// achieved FLOP/s: per-thread SASS instruction counts of the CUDA-core float ops
// (sm__sass_thread_inst_executed_op_{fadd,fmul,ffma,dadd,dmul,dfma,hadd,hmul,hfma}_pred_on.sum)
// and the tensor-core operation counters per source type
// (sm__ops_path_tensor_src_{bf16_dst_fp32,fp16_dst_fp16,fp16_dst_fp32,tf32_dst_fp32,fp8_*}.sum),
// the tensor-pipe instruction counters (sm__inst_executed_pipe_tensor_op_{hmma,gmma}.sum) and the
// tensor-pipe utilisation. A metric the installed ncu does not know is dropped (the runner retries
// without it and records the drop), so the list may name counters that only some versions have.
//
// bench/gpu/ncu_metrics.txt holds the same list for the GPU recording script; a unit test keeps
// the two identical.
#pragma once

#include <string>
#include <vector>

namespace kiln::profile::metric {

// Timing and top-level throughput (Speed of Light).
inline constexpr char kDuration[] = "gpu__time_duration.sum";
inline constexpr char kSmThroughput[] = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr char kMemThroughput[] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr char kDramThroughput[] = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr char kL2Throughput[] = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr char kL1Throughput[] = "l1tex__throughput.avg.pct_of_peak_sustained_active";
inline constexpr char kSmFrequency[] = "sm__cycles_elapsed.avg.per_second";
inline constexpr char kDramBytesRead[] = "dram__bytes_read.sum";
inline constexpr char kDramBytesWrite[] = "dram__bytes_write.sum";
inline constexpr char kL2HitRate[] = "lts__t_sector_hit_rate.pct";
inline constexpr char kL1HitRate[] = "l1tex__t_sector_hit_rate.pct";

// Occupancy and launch.
inline constexpr char kAchievedOccupancy[] = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr char kTheoreticalOccupancy[] = "sm__maximum_warps_per_active_cycle_pct";
inline constexpr char kOccLimitBlocks[] = "launch__occupancy_limit_blocks";
inline constexpr char kOccLimitRegisters[] = "launch__occupancy_limit_registers";
inline constexpr char kOccLimitSharedMem[] = "launch__occupancy_limit_shared_mem";
inline constexpr char kOccLimitWarps[] = "launch__occupancy_limit_warps";
inline constexpr char kRegistersPerThread[] = "launch__registers_per_thread";
inline constexpr char kSharedStatic[] = "launch__shared_mem_per_block_static";
inline constexpr char kSharedDynamic[] = "launch__shared_mem_per_block_dynamic";
inline constexpr char kWaves[] = "launch__waves_per_multiprocessor";
inline constexpr char kGridSize[] = "launch__grid_size";
inline constexpr char kBlockSize[] = "launch__block_size";
inline constexpr char kSmCount[] = "device__attribute_multiprocessor_count";

// Scheduler.
inline constexpr char kIssueActive[] = "smsp__issue_active.avg.per_cycle_active";
inline constexpr char kWarpsEligible[] = "smsp__warps_eligible.avg.per_cycle_active";

// Memory access quality.
inline constexpr char kGlobalLdBytesPerSectorPct[] = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
inline constexpr char kGlobalStBytesPerSectorPct[] = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";
inline constexpr char kGlobalLdSectors[] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr char kGlobalLdRequests[] = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr char kGlobalStSectors[] = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr char kSharedLdBankConflicts[] = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
inline constexpr char kSharedStBankConflicts[] = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
inline constexpr char kSharedLdWavefronts[] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
inline constexpr char kSharedStWavefronts[] = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
inline constexpr char kLocalLdInst[] = "smsp__sass_inst_executed_op_local_ld.sum";
inline constexpr char kLocalStInst[] = "smsp__sass_inst_executed_op_local_st.sum";

// Tensor pipe.
inline constexpr char kTensorPipeActive[] =
    "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr char kTensorCyclesActive[] = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active";
inline constexpr char kTensorInstHmma[] = "sm__inst_executed_pipe_tensor_op_hmma.sum";
inline constexpr char kTensorInstGmma[] = "sm__inst_executed_pipe_tensor_op_gmma.sum";

// Stall reasons: "smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio".
std::string StallMetric(const std::string& reason);
const std::vector<std::string>& StallReasons();

// FLOP counters: metric name, FLOPs per counted unit, and the roofline dtype it belongs to
// ("float32", "float64", "float16", "bfloat16", "tf32", "float8_e4m3fn", "int8": the peaks' keys; int8
// counts integer operations). `unless`: a counter of the same operations summed over more paths (Hopper's
// ncu names fp16 tensor work only sm__ops_path_tensor_src_fp16, without a destination type); when the row has
// it, this one is not added (nullptr: always added).
struct FlopCounter {
  const char* metric;
  double flops_per_unit;
  const char* dtype;
  bool tensor;
  const char* unless = nullptr;
};
const std::vector<FlopCounter>& FlopCounters();

}  // namespace kiln::profile::metric

namespace kiln::profile {

// Every metric kiln asks ncu for, in a stable order.
const std::vector<std::string>& DefaultMetrics();
// The metrics ComputeRoofline reads (a subset of DefaultMetrics): duration, DRAM bytes, SM clock and count,
// the FLOP counters, the tensor pipe's activity.
const std::vector<std::string>& RooflineMetrics();

}  // namespace kiln::profile
