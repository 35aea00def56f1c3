#!/usr/bin/env bash
# Every TritonBench-G module against itself, mode check (10 check workers sharing the GPU,
# 240 s per module); a module the sweep's limit ended runs again alone, longer. REWRITES=1 runs the
# compiled-path rewrite check beside it. Usage: bench/gpu/tritonbench_g_check.sh
# Results under $OUT/tritonbench_g_check, tarred to $OUT/tritonbench_g_check.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
# REWRITES=1: the compiled-path rewrite check runs beside the sweep (both correctness only)
if [ -n "${REWRITES:-}" ]; then
  rewrites ${JOBS:-6} &
  req=$!
fi
ls "$G"/*.py | python3 -c 'import sys,json,os; [print(json.dumps({"id": os.path.basename(p.strip())[:-3], "task": os.path.abspath(p.strip())})) for p in sys.stdin]' > /tmp/tbg.jsonl
timeout ${SWEEP_S:-330} "$KILN_BIN" eval --batch /tmp/tbg.jsonl --mode check --check-workers 10 --timeout 240 --no-db \
  --out /tmp/tbg_check.jsonl --resume > "$w/sweep_stdout.txt" 2> "$w/sweep_stderr.txt"
echo "sweep rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
# A module still running when the sweep's limit ended it has no verdict of its own: alone, longer.
python3 - /tmp/tbg_check.jsonl /tmp/tbg.jsonl > /tmp/tbg_again.jsonl <<'PY'
import json, sys
done = {}
for l in open(sys.argv[1]):
j = json.loads(l); done[j["id"]] = j
for l in open(sys.argv[2]):
j = json.loads(l); r = done.get(j["id"])
msg = ((r or {}).get("result") or {}).get("message", "")
if r is None or (r["verdict"] == "crash" and "signal 9" in msg):
    print(l.strip())
PY
if [ -s /tmp/tbg_again.jsonl ]; then
  left=$(( ${CHECK_S:-560} - (SECONDS - t0) ))
  [ $left -gt 60 ] && timeout $left "$KILN_BIN" eval --batch /tmp/tbg_again.jsonl --mode check --check-workers 2 \
    --timeout $((left - 20)) --no-db --out "$w/tbg_again.jsonl" > /dev/null 2>> "$w/sweep_stderr.txt"
  echo "again ($(wc -l < /tmp/tbg_again.jsonl)) rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
fi
python3 - /tmp/tbg_check.jsonl "$w/tbg_again.jsonl" > "$w/tbg_check.jsonl" <<'PY'
import json, os, sys
rows = {}
for f in sys.argv[1:]:
if os.path.exists(f):
    for l in open(f):
        j = json.loads(l); rows[j["id"]] = j
for k in sorted(rows):
print(json.dumps(rows[k], sort_keys=True))
PY
python3 bench/gpu/summarize_verdicts.py "$w/tbg_check.jsonl" "TritonBench-G self-eval (check)" > "$w/summary.txt"
if [ -n "${req:-}" ]; then
  wait $req; echo "rewrite_equivalence rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
  { grep -E "^(mismatch|variant_error) " "$w/rewrite_equivalence.log" | cut -c1-220; grep -E "^[0-9]+ variants|^summary" "$w/rewrite_equivalence.log"; } >> "$w/summary.txt"
fi
finish
