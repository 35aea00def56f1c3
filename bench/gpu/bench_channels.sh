#!/usr/bin/env bash
# `kiln bench` on a GPU (issue 18), one device command: KernelBench level 1 over five corpus tasks with the
# samples of bench/gpu/kb1_samples.jsonl (mode time), then --gold of TritonBench-T and TritonBench-G over the
# corpus (mode check: the timed TritonBench-G sweep needs about 40 GPU-minutes, bench/results/tritonbench_g_time.md).
# Each step has a limit; a step cut there (SIGINT) is reported from what it has (--report-only).
# Runs from a carried folder (ignored by git) laid out as:
#   D/bin/{kiln, libcpp-httplib.so.0.11, libbrotli*.so.1}  D/worker/  D/corpus/{tritonbench,kernelbench/level1}
#   D/kb1_samples.jsonl  D/bench_channels.sh
# Usage: [RESUME_FROM=DIR] bash D/bench_channels.sh   (writes $OUT/bench.tar.gz; the step lines last)
set -u
d=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$d/bin KILN_WORKER_DIR=$d/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
k=$d/bin/kiln
o=${OUT:-/tmp/kiln-out}/bench
mkdir -p "$o"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$o/nvidia_smi.csv" 2>&1
: > "$o/steps.txt"
# RESUME_FROM=DIR (carried): the bench folders of an earlier run; each step then evaluates only the rest.
if [ -n "${RESUME_FROM:-}" ]; then cp -r "$RESUME_FROM"/. "$o"/ && : > "$o/steps.txt"; fi
# step NAME LIMIT_S ARGS...: one `kiln bench` with its wall time; cut at LIMIT_S, then reported as it stands.
step() {
  local name=$1 limit=$2 s=$SECONDS rc
  shift 2
  timeout -s INT -k 20 "$limit" "$k" bench "$@" --out "$o/$name" --db "$o/kiln.db" > "$o/$name.txt" 2> "$o/$name.err"
  rc=$?
  if [ ! -f "$o/$name/summary.json" ] || [ $rc -ge 124 ]; then
    "$k" bench "$@" --out "$o/$name" --report-only > "$o/$name.txt" 2>> "$o/$name.err"
  fi
  echo "$name rc=$rc wall $((SECONDS - s)) s: $(grep -m1 '^| [^-M]' "$o/$name.txt")" | tee -a "$o/steps.txt"
}
step kb1 ${KB1_S:-55} kernelbench --level 1 --samples "$d/kb1_samples.jsonl" --dataset "$d/corpus/kernelbench" \
  --size dim=16384 --check-workers 2 --label kiln-written-samples
step tbt_gold ${TBT_S:-45} tritonbench-t --gold --dataset "$d/corpus/tritonbench" --mode check --timeout 60
step tbg_gold ${TBG_S:-110} tritonbench-g --gold --dataset "$d/corpus/tritonbench" --mode check --timeout 60
tar -czf "$OUT/bench.tar.gz" --exclude 'kiln.db*' -C "$(dirname "$o")" bench
cat "$o/steps.txt"
