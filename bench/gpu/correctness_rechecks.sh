#!/usr/bin/env bash
# Correctness only, at once: the compiled-path rewrite check (every 2nd variant), the named
# G modules re-checked, chunk_retention_ops alone with a 520 s limit.
# Usage: bench/gpu/correctness_rechecks.sh [G_MODULE...]
# Results under $OUT/correctness_rechecks, tarred to $OUT/correctness_rechecks.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
# Correctness only (no timing), all at once: the rewrites on the compiled path (every 2nd variant of
# the corpus sweep + the golden cases), the named G modules re-checked, chunk_retention_ops alone.
timeout ${CRO_S:-540} "$KILN_BIN" eval --task "$G/chunk_retention_ops.py" --mode check --timeout 520 --no-db --json \
  > "$w/chunk_retention_ops.json" 2> "$w/chunk_retention_ops.stderr" &
cro=$!
if [ $# -gt 0 ]; then
  RECHECK_S=${RECHECK_S:-200} recheck 6 150 "$@" &
  rc_pid=$!
fi
rewrites ${JOBS:-10}
echo "rewrite_equivalence rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
[ -n "${rc_pid:-}" ] && wait $rc_pid
python3 bench/gpu/summarize_verdicts.py "$w/recheck.jsonl" "G modules re-checked" > "$w/summary.txt" 2>&1
wait $cro
echo "chunk_retention_ops rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('chunk_retention_ops', j.get('verdict'), j.get('elapsed_s'), [r['code'] for r in j.get('reasons', [])], j.get('message', '')[:200])" \
  "$w/chunk_retention_ops.json" >> "$w/summary.txt" 2>&1
{ grep -E "^(mismatch|variant_error) " "$w/rewrite_equivalence.log"; grep -E "^[0-9]+ variants|^summary" "$w/rewrite_equivalence.log"; } >> "$w/summary.txt"
finish
