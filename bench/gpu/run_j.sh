#!/usr/bin/env bash
# GPU session J (session 4). Each phase fits one 10-minute command; results under $OUT/j, tarred to
# $OUT/session_j.tar.gz.
#   bench/gpu/run_j.sh check            every TritonBench-G module against itself (10 check workers), then
#                                       chunk_retention_ops alone with a longer limit when the sweep did not
#                                       give it a verdict of its own
#   bench/gpu/run_j.sh check2 [G NAME..] correctness only, at once: compiled-path rewrite equivalence
#                                       (every 2nd variant), the named G modules re-checked,
#                                       chunk_retention_ops alone with a 520 s limit
#   bench/gpu/run_j.sh eval [G NAME..]  the named G modules re-checked; bench/gpu/eval_cli_gpu.sh: the committed candidates recorded in mode
#                                       time (the replay test's data), timing repeatability; then the
#                                       throughput benchmark (kiln batch vs one fresh process per candidate)
#   bench/gpu/run_j.sh autotune NAME..  kiln vs exhaustive on the same grid, with the side-by-side step
#   bench/gpu/run_j.sh suite NAME..     the optimize suite on the named kernels (BUDGET s, default 55)
#   bench/gpu/run_j.sh rewrites         (session 5) the compiled-path rewrite check over the whole corpus
#                                       sweep alone (every variant, JOBS workers, default 12; SKIP_DONE=LOG
#                                       skips the variants an earlier log has a verdict for, e.g.
#                                       bench/results/session5/h100_rewrite_equivalence_partial.log)
#   bench/gpu/run_j.sh repeat           (session 5) the KernelBench add example timed 5 times in one batch,
#                                       with the default check workers and with none (--check-workers 0)
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/j; mkdir -p "$w"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
G=$KILN_CORPUS_DIR/tritonbench/G/kernels
t0=$SECONDS
# the compiled-path rewrite check (EVERY-th variant, $1 jobs), into $w/rewrite_equivalence.{log,json}
rewrites() {
  timeout ${REQ_S:-520} python3 bench/gpu/rewrite_equivalence.py --tool .device-carry/bin/kiln_rewrite_apply \
    --every ${EVERY:-2} --jobs "$1" --timeout 120 ${SKIP_DONE:+--skip-done "$SKIP_DONE"} \
    --json "$w/rewrite_equivalence.json" > "$w/rewrite_equivalence.log" 2>&1
}
# the named G modules again (mode check, $1 check workers, $2 s per module), into $w/recheck.jsonl
recheck() {
  local workers=$1 limit=$2; shift 2
  for k in "$@"; do echo "{\"id\": \"$k\", \"task\": \"$G/$k.py\"}"; done > /tmp/recheck.jsonl
  timeout ${RECHECK_S:-$((limit + 30))} "$KILN_BIN" eval --batch /tmp/recheck.jsonl --mode check --check-workers "$workers" \
    --timeout "$limit" --no-db --out "$w/recheck.jsonl" > /dev/null 2> "$w/recheck_stderr.txt"
}
phase=${1:-check}; shift || true
case "$phase" in
  check)
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
    fi ;;
  check2)
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
    { grep -E "^(mismatch|variant_error) " "$w/rewrite_equivalence.log"; grep -E "^[0-9]+ variants|^summary" "$w/rewrite_equivalence.log"; } >> "$w/summary.txt" ;;
  eval)
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
    } > "$w/summary.txt" ;;
  autotune)
    KILN_SUITE_DIR=/tmp/suite_jat OUT=$w/autotune BUDGET=${BUDGET:-45} EX_BUDGET=${EX_BUDGET:-170} timeout ${AT_S:-565} \
      bash bench/optimize_suite/run.sh autotune "$@" > "$w/autotune.log" 2>&1
    KILN_SUITE_DIR=/tmp/suite_jat OUT=$w/autotune bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1 ;;
  rewrites)
    EVERY=1 REQ_S=${REQ_S:-560} rewrites ${JOBS:-12}
    echo "rewrite_equivalence rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
    { grep -E "^(mismatch|variant_error|original_error) " "$w/rewrite_equivalence.log" | cut -c1-240
      grep -E "^[0-9]+ variants|^summary" "$w/rewrite_equivalence.log"; } > "$w/summary.txt" ;;
  repeat)
    # Is the first pair's outlier (session 4: 0.00245 ms against 0.00167-0.00186) the batch's check
    # workers still on the GPU beside it? The same batch with and without them, twice each, alternating.
    C=$KILN_CORPUS_DIR/kernelbench/examples
    for i in 1 2 3 4 5; do
      echo "{\"id\": \"run$i\", \"task\": \"$C/model_ex_add.py\", \"candidate\": \"$C/model_new_ex_add_triton.py\"}"
    done > /tmp/repeat_pairs.jsonl
    for round in 1 2; do
      for cw in default 0; do
        extra=(); [ "$cw" = 0 ] && extra=(--check-workers 0)
        "$KILN_BIN" eval --batch /tmp/repeat_pairs.jsonl --out "$w/repeat_${cw}_$round.jsonl" --mode time --no-db \
          --gpus 1 --compile-workers 0 "${extra[@]}" 2> "$w/repeat_${cw}_$round.stderr"
      done
    done
    python3 - "$w" <<'PY' > "$w/summary.txt"
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "repeat_*.jsonl"))):
    ms = []
    for line in open(f):
        r = json.loads(line)
        for c in (r.get("result") or {}).get("cases", []):
            if c.get("candidate_ms"):
                ms.append((c["candidate_ms"]["median"], c.get("timing_method", "?")))
    m = [x for x, _ in ms]
    spread = (max(m) - min(m)) / min(m) * 100 if m else float("nan")
    print("%-22s medians %s  spread %.1f%%  methods %s" % (os.path.basename(f), ["%.5f" % x for x in m], spread,
                                                          sorted(set(t for _, t in ms))))
PY
    ;;
  suite)
    KILN_SUITE_DIR=/tmp/suite_j OUT=$w/suite BUDGET=${BUDGET:-55} GRACE=40 timeout ${SUITE_S:-565} \
      bash bench/optimize_suite/run.sh only "$@" > "$w/suite.log" 2>&1
    KILN_SUITE_DIR=/tmp/suite_j OUT=$w/suite bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1 ;;
esac
echo "phase $phase in $((SECONDS - t0)) s"
tar -czf "$OUT/session_j.tar.gz" -C "$OUT" j
cat "$w/summary.txt"
