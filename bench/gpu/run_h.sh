#!/usr/bin/env bash
# GPU session H (prepared for the next session; each phase fits one 10-minute command):
#   bench/gpu/run_h.sh suite      the optimize suite, one shard per GPU (BUDGET s per kernel; the new
#                                 defaults: --cases @largest:3, cached perf inputs, shared worker)
#   bench/gpu/run_h.sh autotune   kiln vs exhaustive on the same grid (bench/optimize_suite/grids)
#   bench/gpu/run_h.sh sweep      TritonBench-G self-eval, resumable (run it again to continue)
# Results under $OUT/h (tarred to $OUT/session_h.tar.gz).
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/h; mkdir -p "$w"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
t0=$SECONDS
case "${1:-suite}" in
  suite)
    n=$(nvidia-smi -L | grep -c GPU)
    for ((k = 0; k < n; k++)); do
      CUDA_VISIBLE_DEVICES=$k KILN_SUITE_DIR=/tmp/suite_h$k OUT=/tmp/suite_h$k/out BUDGET=${BUDGET:-45} GRACE=45 \
        timeout ${SUITE_S:-560} bash bench/optimize_suite/run.sh shard $k $n > "$w/shard_$k.log" 2>&1 &
    done
    wait
    mkdir -p /tmp/suite_hall/results /tmp/suite_hall/logs
    for ((k = 0; k < n; k++)); do cp /tmp/suite_h$k/results/* /tmp/suite_hall/results/ 2>/dev/null; cp /tmp/suite_h$k/logs/* /tmp/suite_hall/logs/ 2>/dev/null; done
    KILN_SUITE_DIR=/tmp/suite_hall OUT=$w/suite bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1 ;;
  autotune)
    KILN_SUITE_DIR=/tmp/suite_hat OUT=$w/autotune BUDGET=${BUDGET:-45} timeout ${AT_S:-570} \
      bash bench/optimize_suite/run.sh autotune > "$w/autotune.log" 2>&1
    KILN_SUITE_DIR=/tmp/suite_hat OUT=$w/autotune bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1 ;;
  sweep)
    ls "$KILN_CORPUS_DIR"/tritonbench/G/kernels/*.py | python3 -c 'import sys,json,os; [print(json.dumps({"id": os.path.basename(p.strip())[:-3], "task": os.path.abspath(p.strip())})) for p in sys.stdin]' > /tmp/tbg.jsonl
    timeout ${SWEEP_S:-560} "$KILN_BIN" eval --batch /tmp/tbg.jsonl --mode check --check-workers 8 --timeout 240 --no-db \
      --out /tmp/tbg_check.jsonl --resume > "$w/sweep_stdout.txt" 2> "$w/sweep_stderr.txt"
    echo "sweep rc=$?"; cp /tmp/tbg_check.jsonl "$w/"
    python3 bench/gpu/summarize_verdicts.py "$w/tbg_check.jsonl" "TritonBench-G self-eval (check)" > "$w/summary.txt" ;;
esac
echo "phase ${1:-suite} in $((SECONDS - t0)) s"
tar -czf "$OUT/session_h.tar.gz" -C "$OUT" h
cat "$w/summary.txt"
