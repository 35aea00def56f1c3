#!/usr/bin/env bash
# GPU session F (1 GPU): smoke of `kiln optimize` (shared measuring worker) on one suite kernel, the
# TritonBench-G self-evaluation sweep (check mode, K check workers), then the throughput benchmark.
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/f; mkdir -p "$w"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
t0=$SECONDS
timeout 75 "$KILN_BIN" optimize "$KILN_CORPUS_DIR/tritonbench/G/kernels/softmax_triton1.py" --budget-seconds 30 \
  --search-cases largest --no-db --json "$w/smoke.json" -o "$w/smoke.py" > "$w/smoke.txt" 2>&1
echo "optimize smoke rc=$? in $((SECONDS - t0)) s: $(grep -m1 'result:' "$w/smoke.txt")"
ls "$KILN_CORPUS_DIR"/tritonbench/G/kernels/*.py | python3 -c 'import sys,json,os; [print(json.dumps({"id": os.path.basename(p.strip())[:-3], "task": os.path.abspath(p.strip())})) for p in sys.stdin]' > "$w/tbg.jsonl"
t0=$SECONDS
timeout ${SWEEP_S:-210} "$KILN_BIN" eval --batch "$w/tbg.jsonl" --mode check --check-workers 8 --timeout 90 --no-db \
  --out "$w/tbg_check.jsonl" > "$w/tbg_stdout.txt" 2> "$w/tbg_stderr.txt"
echo "sweep rc=$? in $((SECONDS - t0)) s"
python3 bench/gpu/summarize_verdicts.py "$w/tbg_check.jsonl" "TritonBench-G self-eval (check)" > "$w/tbg_summary.txt"
head -1 "$w/tbg_summary.txt"
OUT=$w/tp TP_BLOCKS=256,512,1024,2048,4096 FRESH_EVERY=5 timeout ${TP_S:-290} bash bench/eval_throughput/run.sh "$KILN_BIN" 1 \
  > "$w/throughput.log" 2>&1
echo "throughput rc=$?"
grep -h "restart\|leftover\|left behind" "$w"/tp/kiln_stderr.txt 2>/dev/null | head -5 > "$w/restarts.txt"
tar -czf "$OUT/session_f.tar.gz" -C "$OUT" f
echo "=== summary"; cat "$w/tbg_summary.txt" | head -30; tail -4 "$w/throughput.log"; wc -l < "$w/restarts.txt"
