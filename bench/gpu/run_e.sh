#!/usr/bin/env bash
# GPU session E (2 GPUs): the optimize suite, one shard per GPU at once (BUDGET s per kernel).
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/e; mkdir -p "$w"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
n=$(nvidia-smi -L | grep -c GPU); n=${SHARDS:-$n}
t0=$SECONDS
for ((k = 0; k < n; k++)); do
  if ((k == n - 1)); then  # the bundled example first on the last GPU
    (CUDA_VISIBLE_DEVICES=$k timeout 90 "$KILN_BIN" optimize examples/softmax --budget-seconds ${BUDGET:-40} \
      --out "$w/softmax_optimized.py" --json "$w/softmax.json" --html "$w/softmax.html" --no-db \
      > "$w/softmax.txt" 2>&1; echo "example rc=$?" >> "$w/softmax.txt")
  fi
  CUDA_VISIBLE_DEVICES=$k KILN_SUITE_DIR=/tmp/suite_$k OUT=/tmp/suite_$k/out BUDGET=${BUDGET:-40} \
    timeout $(( ${SUITE_S:-540} - (SECONDS - t0) )) bash bench/optimize_suite/run.sh shard $k $n > "$w/shard_$k.log" 2>&1 &
done
wait
echo "suite wall $((SECONDS - t0)) s on $n GPU(s)"
mkdir -p /tmp/suite_all/results /tmp/suite_all/logs
for ((k = 0; k < n; k++)); do cp /tmp/suite_$k/results/* /tmp/suite_all/results/ 2>/dev/null; cp /tmp/suite_$k/logs/* /tmp/suite_all/logs/ 2>/dev/null; done
cp /tmp/suite_0/gpu.txt /tmp/suite_all/ 2>/dev/null
KILN_SUITE_DIR=/tmp/suite_all OUT=$w/suite bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1
tar -czf "$OUT/session_e.tar.gz" -C "$OUT" e
cat "$w/summary.txt"
