#include "profile/metrics.h"

namespace kiln::profile::metric {

std::string StallMetric(const std::string& reason) {
  return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

const std::vector<std::string>& StallReasons() {
  static const std::vector<std::string> kReasons = {"long_scoreboard",
                                                    "short_scoreboard",
                                                    "barrier",
                                                    "mio_throttle",
                                                    "lg_throttle",
                                                    "math_pipe_throttle",
                                                    "wait",
                                                    "not_selected",
                                                    "no_instruction",
                                                    "membar",
                                                    "branch_resolving",
                                                    "dispatch_stall",
                                                    "drain",
                                                    "imc_miss",
                                                    "tex_throttle",
                                                    "sleeping",
                                                    "misc",
                                                    "selected"};
  return kReasons;
}

const std::vector<FlopCounter>& FlopCounters() {
  // CUDA-core counters count thread instructions: an FMA is 2 FLOPs. Half-precision counters count
  // HADD2/HMUL2/HFMA2 thread instructions, each on two packed values (ncu's roofline convention).
  // Tensor counters count operations (a multiply-add is 2), i.e. FLOPs.
  static const std::vector<FlopCounter> kCounters = {
      {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1, "float32", false},
      {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 1, "float32", false},
      {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2, "float32", false},
      {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", 1, "float64", false},
      {"sm__sass_thread_inst_executed_op_dmul_pred_on.sum", 1, "float64", false},
      {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum", 2, "float64", false},
      {"sm__sass_thread_inst_executed_op_hadd_pred_on.sum", 2, "float16_cuda", false},
      {"sm__sass_thread_inst_executed_op_hmul_pred_on.sum", 2, "float16_cuda", false},
      {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", 4, "float16_cuda", false},
      {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1, "bfloat16", true},
      // On an H200 (ncu 2025.3, gh100) fp16 and fp8 tensor work is counted only without a destination type:
      // TritonBench-G's fp16 GEMMs had no FLOPs and read as 26-30% of the memory roof while their tensor
      // pipes were 83-91% busy. Names with a destination type are kept for chips whose ncu has them.
      {"sm__ops_path_tensor_src_fp16.sum", 1, "float16", true},
      {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 1, "float16", true, "sm__ops_path_tensor_src_fp16.sum"},
      {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 1, "float16", true, "sm__ops_path_tensor_src_fp16.sum"},
      {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", 1, "tf32", true},
      {"sm__ops_path_tensor_src_fp8.sum", 1, "float8_e4m3fn", true},
      {"sm__ops_path_tensor_src_fp8_dst_fp16.sum", 1, "float8_e4m3fn", true, "sm__ops_path_tensor_src_fp8.sum"},
      {"sm__ops_path_tensor_src_fp8_dst_fp32.sum", 1, "float8_e4m3fn", true, "sm__ops_path_tensor_src_fp8.sum"},
      {"sm__ops_path_tensor_src_int8.sum", 1, "int8", true},
  };
  return kCounters;
}

}  // namespace kiln::profile::metric

namespace kiln::profile {

const std::vector<std::string>& DefaultMetrics() {
  static const std::vector<std::string> kList = [] {
    namespace m = metric;
    std::vector<std::string> v = {
        m::kDuration,
        m::kSmThroughput,
        m::kMemThroughput,
        m::kDramThroughput,
        m::kL2Throughput,
        m::kL1Throughput,
        m::kSmFrequency,
        m::kDramBytesRead,
        m::kDramBytesWrite,
        m::kL2HitRate,
        m::kL1HitRate,
        m::kAchievedOccupancy,
        m::kTheoreticalOccupancy,
        m::kOccLimitBlocks,
        m::kOccLimitRegisters,
        m::kOccLimitSharedMem,
        m::kOccLimitWarps,
        m::kRegistersPerThread,
        m::kSharedStatic,
        m::kSharedDynamic,
        m::kWaves,
        m::kGridSize,
        m::kBlockSize,
        m::kSmCount,
        m::kIssueActive,
        m::kWarpsEligible,
        m::kGlobalLdBytesPerSectorPct,
        m::kGlobalStBytesPerSectorPct,
        m::kGlobalLdSectors,
        m::kGlobalLdRequests,
        m::kGlobalStSectors,
        m::kSharedLdBankConflicts,
        m::kSharedStBankConflicts,
        m::kSharedLdWavefronts,
        m::kSharedStWavefronts,
        m::kLocalLdInst,
        m::kLocalStInst,
        m::kTensorPipeActive,
        m::kTensorCyclesActive,
        m::kTensorInstHmma,
        m::kTensorInstGmma,
    };
    for (const auto& r : m::StallReasons()) v.push_back(m::StallMetric(r));
    for (const auto& f : m::FlopCounters()) v.push_back(f.metric);
    return v;
  }();
  return kList;
}

const std::vector<std::string>& RooflineMetrics() {
  static const std::vector<std::string> kList = [] {
    namespace m = metric;
    std::vector<std::string> v = {m::kDuration, m::kSmFrequency,      m::kDramBytesRead,     m::kDramBytesWrite,
                                  m::kSmCount,  m::kTensorPipeActive, m::kTensorCyclesActive};
    for (const auto& f : m::FlopCounters()) v.push_back(f.metric);
    return v;
  }();
  return kList;
}

}  // namespace kiln::profile
