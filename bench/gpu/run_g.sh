#!/usr/bin/env bash
# GPU session G (1 GPU): throughput benchmark (36 candidates, every 6th through the fresh harness), then
# the optimize suite on the kernels named in $KERNELS (BUDGET s each, the three largest perf cases).
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/g; mkdir -p "$w"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
t0=$SECONDS
OUT=$w/tp TP_BLOCKS=512,1024,2048,4096 FRESH_EVERY=6 timeout ${TP_S:-220} bash bench/eval_throughput/run.sh "$KILN_BIN" 1 \
  > "$w/throughput.log" 2>&1
echo "throughput rc=$? in $((SECONDS - t0)) s"
KILN_SUITE_DIR=/tmp/suite_g OUT=$w/suite BUDGET=${BUDGET:-40} GRACE=40 timeout $(( ${TOTAL_S:-560} - (SECONDS - t0) )) \
  bash bench/optimize_suite/run.sh only ${KERNELS:-add_example swiglu_backward softmax_flaggems matmul_triton2 rmsnorm_triton context_attn_fwd int8_quantization} \
  > "$w/suite.log" 2>&1
echo "suite rc=$?"
KILN_SUITE_DIR=/tmp/suite_g OUT=$w/suite bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1
tar -czf "$OUT/session_g.tar.gz" -C "$OUT" g
echo "=== summary"; tail -4 "$w/throughput.log"; cat "$w/summary.txt"
