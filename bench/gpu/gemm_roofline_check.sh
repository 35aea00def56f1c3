#!/usr/bin/env bash
# Session 23 (issue 21): why do TritonBench-G's fp16 GEMMs read 26-30% of their roofline (triton_matmul ran
# its 4096^3 case in 0.188 ms, about 730 TFLOP/s, beside a measured cuBLAS fp16 roof near 750)? One run:
# `kiln profile --task` of the fp16 GEMMs at their largest perf case (raw CSV kept), the same for a bf16 and an
# fp16 cuBLAS matmul through `ncu` by hand with the tensor counters, and the tensor metrics this ncu knows.
# Everything under $OUT/gemm_roofline_check (tarred); a table last.
# Usage (repository root on the GPU host, .device-carry carried): bash bench/gpu/gemm_roofline_check.sh
JOB=gemm_roofline_check
source "$(dirname "$0")/lib.sh"
set -u
ncu=${NCU:-$(command -v ncu || ls -1d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -1)}
: > "$w/summary.txt"
row() { printf '%-24s rc=%-3s %4d s  %s\n' "$1" "$2" "$3" "$4" | tee -a "$w/summary.txt"; }
"$ncu" --query-metrics --chip gh100 2> /dev/null | grep -i "tensor" > "$w/tensor_metrics.txt"
row query_metrics 0 0 "$(wc -l < "$w/tensor_metrics.txt") tensor metrics"
for spec in triton_matmul:perf_30 matmul_triton2:perf_30 bmm_optimized:perf_30; do
  k=${spec%%:*} c=${spec#*:} s=$SECONDS
  timeout 150 "$KILN_BIN" profile --task "$G/$k.py" --case "$c" --ncu "$ncu" --json --save-csv "$w/$k.csv" \
    > "$w/$k.json" 2> "$w/$k.err"
  rc=$?
  roof=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); k=(j.get('kernels') or [{}])[0]; r=k.get('roofline') or {}; print('roof', r.get('fraction_of_roof'), 'dur', r.get('seconds'), 'flops', r.get('total_flops'), [(d.get('dtype'), d.get('flops'), d.get('peak_flops_per_s')) for d in r.get('dtypes', [])][:3])" "$w/$k.json" 2>&1 | cut -c1-200)
  row "$k" $rc $((SECONDS - s)) "$roof"
done
cat > "$w/cublas.py" << 'EOF'
import sys, torch
dt = {"fp16": torch.float16, "bf16": torch.bfloat16}[sys.argv[1]]
a = torch.rand(4096, 4096, device="cuda", dtype=dt); b = torch.rand(4096, 4096, device="cuda", dtype=dt)
for _ in range(3): c = a @ b
torch.cuda.synchronize()
EOF
mets=$(grep -o '^[a-z_]*tensor[a-z0-9_]*' "$w/tensor_metrics.txt" | sort -u | grep -E "ops_path|inst_executed_pipe_tensor|pipe_tensor.*cycles_active" | sed 's/$/.sum/' | tr '\n' ',' | sed 's/,$//')
echo "$mets" > "$w/cublas_metrics.txt"
for dt in fp16 bf16; do
  s=$SECONDS
  timeout 120 "$ncu" --csv --page raw --clock-control none --launch-skip 2 --launch-count 1 \
    --metrics "gpu__time_duration.sum,$mets" python3 "$w/cublas.py" $dt > "$w/cublas_$dt.csv" 2> "$w/cublas_$dt.err"
  rc=$?
  # Falls back to the metrics kiln itself collects when the queried names do not all resolve.
  if [ $rc -ne 0 ]; then
    timeout 120 "$ncu" --csv --page raw --clock-control none --launch-skip 2 --launch-count 1 \
      --metrics "gpu__time_duration.sum,$(grep -E 'tensor' bench/gpu/ncu_metrics.txt | tr '\n' ',' | sed 's/,$//')" \
      python3 "$w/cublas.py" $dt > "$w/cublas_$dt.csv" 2>> "$w/cublas_$dt.err"
    rc=$?
  fi
  row "cublas_$dt" $rc $((SECONDS - s)) "$(wc -l < "$w/cublas_$dt.csv") lines (4096^3: 1.374e11 FLOP)"
done
finish
