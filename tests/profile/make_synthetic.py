#!/usr/bin/env python3
"""Writes SYNTHETIC ncu raw-page CSVs (tests/profile/synthetic/) for developing and testing the
diagnosis without a GPU. The numbers are invented to sit in each kernel's regime (they mirror the
kernels in tests/profile/kernels/); the FORMAT is ncu's `--csv --page raw`: a header of column
names, a units row, one quoted row per kernel launch, thousands separators, "n/a" cells, and
==PROF== lines around the table. Real recordings go to tests/profile/data/ (bench/gpu/record_ncu.sh).

    python3 tests/profile/make_synthetic.py      # rewrites tests/profile/synthetic/*.csv
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
METRICS = [l.strip() for l in open(os.path.join(ROOT, "bench/gpu/ncu_metrics.txt")) if l.strip()]
OUT = os.path.join(HERE, "synthetic")
FIXED = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
         "Block Size", "Grid Size", "Device", "CC"]
STALLS = ["long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "lg_throttle",
          "math_pipe_throttle", "wait", "not_selected", "no_instruction", "membar", "branch_resolving",
          "dispatch_stall", "drain", "imc_miss", "tex_throttle", "sleeping", "misc", "selected"]


def fmt(v):
    if isinstance(v, str):
        return v
    if float(v).is_integer() and abs(v) >= 1000:
        return f"{int(v):,}"          # thousands separators, as ncu prints them
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.2f}"


def defaults():
    d = {m: (0, "") for m in METRICS}
    for m in METRICS:
        if m.endswith(".pct") or "pct_of_peak" in m or m.endswith("_pct"):
            d[m] = (0, "%")
        if m.startswith("smsp__average_warps_issue_stalled"):
            d[m] = (0.05, "")
    d.update({
        "gpu__time_duration.sum": (100000, "nsecond"),
        "sm__cycles_elapsed.avg.per_second": (1.755, "cycle/nsecond"),
        "device__attribute_multiprocessor_count": (132, ""),
        "launch__occupancy_limit_blocks": (32, "block"), "launch__occupancy_limit_registers": (16, "block"),
        "launch__occupancy_limit_shared_mem": (32, "block"), "launch__occupancy_limit_warps": (8, "block"),
        "sm__maximum_warps_per_active_cycle_pct": (100, "%"), "sm__warps_active.avg.pct_of_peak_sustained_active": (90, "%"),
        "launch__registers_per_thread": (32, "register/thread"),
        "smsp__issue_active.avg.per_cycle_active": (0.3, "inst/cycle"),
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": (100, "%"),
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct": (100, "%"),
        "lts__t_sector_hit_rate.pct": (30, "%"), "l1tex__t_sector_hit_rate.pct": (10, "%"),
        "launch__block_size": (128, ""), "launch__grid_size": (1024, ""), "launch__waves_per_multiprocessor": (4, ""),
        "launch__shared_mem_per_block_static": (0, "byte"), "launch__shared_mem_per_block_dynamic": (0, "byte"),
        "sm__ops_path_tensor_src_fp8_dst_fp16.sum": ("n/a", ""),   # absent on this "ncu": n/a cells
    })
    return d


def stalls(**shares):
    return {f"smsp__average_warps_issue_stalled_{k}_per_issue_active.ratio": (v, "") for k, v in shares.items()}


K = {}
K["vec_add"] = [("vec_add_kernel", "(256, 1, 1)", "(32768, 1, 1)", {
    "gpu__time_duration.sum": (518.3, "usecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (18.2, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (92.6, "%"),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": (92.6, "%"),
    "dram__bytes_read.sum": (1.07, "Gbyte"), "dram__bytes_write.sum": (537.2, "Mbyte"),
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": (134217728, "inst"),
    "launch__grid_size": (32768, ""), "launch__block_size": (256, ""), "launch__waves_per_multiprocessor": (31.03, ""),
    **stalls(long_scoreboard=9.5, lg_throttle=1.2, wait=0.4),
    "smsp__issue_active.avg.per_cycle_active": (0.09, "inst/cycle"),
})]
K["transpose_naive"] = [("transpose_naive_kernel", "(128, 1, 1)", "(8192, 32, 1)", {
    "gpu__time_duration.sum": (1450000, "nsecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (21.4, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (84.9, "%"),
    "l1tex__throughput.avg.pct_of_peak_sustained_active": (84.9, "%"),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": (38.0, "%"),
    "dram__bytes_read.sum": (1610612736, "byte"), "dram__bytes_write.sum": (268435456, "byte"),
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct": (12.5, "%"),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": (67108864, "sector"),
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": (2097152, "request"),
    "launch__grid_size": (262144, ""), "launch__waves_per_multiprocessor": (124.1, ""),
    **stalls(long_scoreboard=22.0, lg_throttle=3.0, wait=0.5),
    "smsp__issue_active.avg.per_cycle_active": (0.05, "inst/cycle"),
})]
K["small_grid"] = [("row_sum_kernel", "(128, 1, 1)", "(32, 1, 1)", {
    "gpu__time_duration.sum": (61.2, "usecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (2.9, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (11.8, "%"),
    "dram__bytes_read.sum": (8.39, "Mbyte"), "dram__bytes_write.sum": (128, "byte"),
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": (2097152, "inst"),
    "launch__grid_size": (32, ""), "launch__waves_per_multiprocessor": (0.02, ""),
    "sm__warps_active.avg.pct_of_peak_sustained_active": (6.2, "%"),
    **stalls(long_scoreboard=14.0, wait=1.0),
})]
K["softmax_regs"] = [("softmax_regs_kernel", "(128, 1, 1)", "(16384, 1, 1)", {
    "gpu__time_duration.sum": (402.0, "usecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (34.8, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (69.9, "%"),
    "dram__bytes_read.sum": (536870912, "byte"), "dram__bytes_write.sum": (536870912, "byte"),
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": (134217728, "inst"),
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": (268435456, "inst"),
    "sm__maximum_warps_per_active_cycle_pct": (18.75, "%"), "sm__warps_active.avg.pct_of_peak_sustained_active": (17.9, "%"),
    "launch__occupancy_limit_registers": (3, "block"), "launch__registers_per_thread": (168, "register/thread"),
    "launch__grid_size": (16384, ""), "launch__waves_per_multiprocessor": (41.4, ""),
    **stalls(long_scoreboard=18.0, barrier=2.0, wait=1.0),
    "smsp__issue_active.avg.per_cycle_active": (0.21, "inst/cycle"),
})]
K["softmax_spill"] = [("softmax_spill_kernel", "(128, 1, 1)", "(4096, 1, 1)", {
    "gpu__time_duration.sum": (1.21, "msecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (31.0, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (52.3, "%"),
    "dram__bytes_read.sum": (1.07, "Gbyte"), "dram__bytes_write.sum": (1.07, "Gbyte"),
    "sm__maximum_warps_per_active_cycle_pct": (12.5, "%"), "sm__warps_active.avg.pct_of_peak_sustained_active": (12.1, "%"),
    "launch__occupancy_limit_registers": (2, "block"), "launch__registers_per_thread": (255, "register/thread"),
    "smsp__sass_inst_executed_op_local_ld.sum": (8388608, "inst"), "smsp__sass_inst_executed_op_local_st.sum": (4194304, "inst"),
    "launch__grid_size": (4096, ""), "launch__waves_per_multiprocessor": (15.5, ""),
    **stalls(long_scoreboard=31.0, lg_throttle=6.0, wait=1.0),
    "smsp__issue_active.avg.per_cycle_active": (0.12, "inst/cycle"),
})]
K["gemm_bf16"] = [("gemm_bf16_kernel", "(256, 1, 1)", "(2048, 1, 1)", {
    "gpu__time_duration.sum": (1.70, "msecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (87.9, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (44.7, "%"),
    "dram__bytes_read.sum": (402653184, "byte"), "dram__bytes_write.sum": (134217728, "byte"),
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum": (1.0995e12, ""),
    "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active": (86.1, "%"),
    "sm__maximum_warps_per_active_cycle_pct": (12.5, "%"), "sm__warps_active.avg.pct_of_peak_sustained_active": (12.4, "%"),
    "launch__occupancy_limit_shared_mem": (1, "block"), "launch__shared_mem_per_block_dynamic": (196608, "byte"),
    "launch__registers_per_thread": (168, "register/thread"),
    "launch__grid_size": (2048, ""), "launch__block_size": (256, ""), "launch__waves_per_multiprocessor": (15.52, ""),
    **stalls(math_pipe_throttle=0.6, long_scoreboard=0.4, barrier=0.5, wait=0.3),
    "smsp__issue_active.avg.per_cycle_active": (0.28, "inst/cycle"),
})]
K["gemm_fp32_ieee"] = [("gemm_fp32_ieee_kernel", "(256, 1, 1)", "(32, 32, 1)", {
    "gpu__time_duration.sum": (3.02, "msecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (82.3, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (30.2, "%"),
    "dram__bytes_read.sum": (201326592, "byte"), "dram__bytes_write.sum": (67108864, "byte"),
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": (68719476736, "inst"),
    "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active": (0, "%"),
    "sm__maximum_warps_per_active_cycle_pct": (25, "%"), "sm__warps_active.avg.pct_of_peak_sustained_active": (24.0, "%"),
    "launch__occupancy_limit_registers": (2, "block"),
    "launch__grid_size": (1024, ""), "launch__block_size": (256, ""), "launch__waves_per_multiprocessor": (3.88, ""),
    **stalls(math_pipe_throttle=1.9, wait=0.6, long_scoreboard=0.3),
    "smsp__issue_active.avg.per_cycle_active": (0.71, "inst/cycle"),
})]
K["partial_wave"] = [("fma_chain_kernel", "(1024, 1, 1)", "(303, 1, 1)", {
    "gpu__time_duration.sum": (205.0, "usecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (74.8, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (4.1, "%"),
    "dram__bytes_read.sum": (1241088, "byte"), "dram__bytes_write.sum": (1241088, "byte"),
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": (2541748224, "inst"),
    "launch__grid_size": (303, ""), "launch__block_size": (1024, ""), "launch__waves_per_multiprocessor": (1.15, ""),
    "launch__occupancy_limit_warps": (2, "block"),
    **stalls(wait=1.5, math_pipe_throttle=0.8),
    "smsp__issue_active.avg.per_cycle_active": (0.62, "inst/cycle"),
})]
K["tiny"] = [("tiny_add_kernel", "(128, 1, 1)", "(4, 1, 1)", {
    "gpu__time_duration.sum": (2144, "nsecond"),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": (0.4, "%"),
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (1.6, "%"),
    "dram__bytes_read.sum": (32768, "byte"), "dram__bytes_write.sum": (16384, "byte"),
    "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": (4096, "inst"),
    "launch__grid_size": (4, ""), "launch__waves_per_multiprocessor": (0.0019, ""),
    "sm__warps_active.avg.pct_of_peak_sustained_active": (6.1, "%"),
})]
K["two_kernels"] = [
    ("scale_kernel", "(128, 1, 1)", "(32768, 1, 1)", {
        "gpu__time_duration.sum": (176.3, "usecond"),
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": (15.0, "%"),
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (88.0, "%"),
        "dram__bytes_read.sum": (268435456, "byte"), "dram__bytes_write.sum": (268435456, "byte"),
        "sm__sass_thread_inst_executed_op_fmul_pred_on.sum": (67108864, "inst"),
        "launch__grid_size": (32768, ""), "launch__waves_per_multiprocessor": (15.5, ""),
        **stalls(long_scoreboard=10.0), "smsp__issue_active.avg.per_cycle_active": (0.08, "inst/cycle")}),
    ("add3_kernel", "(128, 1, 1)", "(32768, 1, 1)", {
        "gpu__time_duration.sum": (351.9, "usecond"),
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": (16.0, "%"),
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": (89.5, "%"),
        "dram__bytes_read.sum": (805306368, "byte"), "dram__bytes_write.sum": (268435456, "byte"),
        "sm__sass_thread_inst_executed_op_fadd_pred_on.sum": (134217728, "inst"),
        "launch__grid_size": (32768, ""), "launch__waves_per_multiprocessor": (15.5, ""),
        **stalls(long_scoreboard=11.0), "smsp__issue_active.avg.per_cycle_active": (0.08, "inst/cycle")}),
]


def q(cells):
    return ",".join('"' + str(c).replace('"', '""') + '"' for c in cells)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, rows in K.items():
        lines = ["==PROF== Connected to process 4242 (/usr/bin/python3.12)"]
        for i, (kname, _, _, _) in enumerate(rows):
            lines.append(f'==PROF== Profiling "{kname}" - {i}: 0%....50%....100% - 9 passes')
        lines.append(f"{name}: ok (cuda)")  # the program's own stdout, interleaved
        lines.append("==PROF== Disconnected from process 4242")
        lines.append(q(FIXED + METRICS))
        first = {**defaults(), **rows[0][3]}
        lines.append(q([""] * len(FIXED) + [first[m][1] for m in METRICS]))
        for i, (kname, block, grid, vals) in enumerate(rows):
            v = {**defaults(), **vals}
            fixed = [str(i), "4242", "python3.12", "127.0.0.1", kname, "1", "7", block, grid, "0", "9.0"]
            lines.append(q(fixed + [fmt(v[m][0]) for m in METRICS]))
        with open(os.path.join(OUT, name + ".csv"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"wrote {len(K)} synthetic CSVs to {OUT}")


if __name__ == "__main__":
    main()
