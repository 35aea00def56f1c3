#!/usr/bin/env bash
# GPU session A: the worker's compiled-path self-check (transcripts for replay tests), then
# the evaluation throughput benchmark (kiln eval --batch vs one fresh process per candidate).
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/a; mkdir -p "$w"
timeout 330 bash bench/gpu/worker_gpu_check.sh > "$w/check.log" 2>&1; echo "check rc=$?"
cp -f "$OUT"/worker_* "$OUT"/nvidia_smi.csv "$OUT"/versions.txt "$w/" 2>/dev/null
OUT=$w/tp TP_BLOCKS=1024,4096 timeout 250 bash bench/eval_throughput/run.sh "$KILN_BIN" 1 > "$w/throughput.log" 2>&1; echo "throughput rc=$?"
tar -czf "$OUT/session_a.tar.gz" -C "$OUT" a
grep -E "^(PASS|FAIL)" "$w/worker_gpu_check.txt" | cut -c1-150 | grep FAIL; grep -E "summary" "$w/worker_gpu_check.txt"
tail -4 "$w/throughput.log"
