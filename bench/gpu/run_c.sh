#!/usr/bin/env bash
# GPU session C: TritonBench-G self-evaluation through `kiln eval --batch` in check mode (K check
# workers sharing the GPU), the pipelined throughput benchmark, then `kiln optimize` on the bundled
# example and a slice of the optimize suite.
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/c; mkdir -p "$w"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
ls "$KILN_CORPUS_DIR"/tritonbench/G/kernels/*.py | python3 -c 'import sys,json,os; [print(json.dumps({"id": os.path.basename(p.strip())[:-3], "task": os.path.abspath(p.strip())})) for p in sys.stdin]' > "$w/tbg.jsonl"
t0=$SECONDS
timeout ${SWEEP_S:-170} "$KILN_BIN" eval --batch "$w/tbg.jsonl" --mode check --check-workers 8 --timeout 90 --no-db \
  --out "$w/tbg_check.jsonl" > "$w/tbg_stdout.txt" 2> "$w/tbg_stderr.txt"
echo "sweep rc=$? in $((SECONDS - t0)) s"
python3 bench/gpu/summarize_verdicts.py "$w/tbg_check.jsonl" "TritonBench-G self-eval (check)" | tee "$w/tbg_summary.txt" | head -3
OUT=$w/tp TP_BLOCKS=1024 timeout ${TP_S:-170} bash bench/eval_throughput/run.sh "$KILN_BIN" 1 > "$w/throughput.log" 2>&1
echo "throughput rc=$?"; tail -3 "$w/throughput.log"
t0=$SECONDS
timeout 100 "$KILN_BIN" optimize examples/softmax --budget-seconds ${OPT_BUDGET:-40} --out "$w/softmax_optimized.py" \
  --json "$w/optimize_softmax.json" --html "$w/optimize_softmax.html" --no-db > "$w/optimize_softmax.txt" 2>&1
echo "optimize example rc=$? in $((SECONDS - t0)) s"; grep -E "result:|speedup|baseline" "$w/optimize_softmax.txt" | head -5
KILN_SUITE_DIR=$w/suite OUT=$w/suite/out BUDGET=${OPT_BUDGET:-40} timeout ${SUITE_S:-170} \
  bash bench/optimize_suite/run.sh suite 0 ${SUITE_N:-3} > "$w/suite.log" 2>&1
echo "suite rc=$?"; tail -8 "$w/suite.log"
tar -czf "$OUT/session_c.tar.gz" -C "$OUT" c
