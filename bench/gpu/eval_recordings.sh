#!/usr/bin/env bash
# The named G modules re-checked, every committed candidate recorded in mode time
# (bench/gpu/eval_cli_gpu.sh: the data of the eval_replay_gpu test), then the throughput benchmark
# (kiln eval --batch against one fresh process per candidate). Usage: bench/gpu/eval_recordings.sh [G_MODULE...]
# Results under $OUT/eval_recordings, tarred to $OUT/eval_recordings.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
# The named G modules (those the sweep left not ok) again, after changes to the check
if [ $# -gt 0 ]; then
  recheck 8 120 "$@"
  echo "recheck rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
  python3 bench/gpu/summarize_verdicts.py "$w/recheck.jsonl" "G modules re-checked" > "$w/recheck.txt"
fi
OUT=$w/eval NO_CTEST=1 NO_ISOLATION=1 timeout ${EVAL_S:-300} bash bench/gpu/eval_cli_gpu.sh > "$w/eval.log" 2>&1
echo "eval_cli_gpu rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
OUT=$w/tp TP_BLOCKS=512,1024,2048,4096 FRESH_EVERY=6 timeout $(( ${TOTAL_S:-565} - (SECONDS - t0) )) \
  bash bench/eval_throughput/run.sh "$KILN_BIN" 1 > "$w/throughput.log" 2>&1
echo "throughput rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
{ cat "$w/recheck.txt" "$w/eval/repeat.txt" 2>/dev/null; tail -5 "$w/throughput.log"
  python3 - "$w/eval/expected.jsonl" <<'PY'
import json, sys
try:
for l in open(sys.argv[1]):
    j = json.loads(l); r = j.get("result") or {}
    print("%-45s %-14s %s" % (j.get("id"), j.get("verdict"), " ".join(x.get("code", "") for x in r.get("reasons", []))))
except OSError as e:
print("no recording:", e)
PY
} > "$w/summary.txt"
finish
