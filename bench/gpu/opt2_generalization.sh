#!/usr/bin/env bash
# The generalization suite of issue 21 (bench/optimize_suite/generalization.sh) in ONE device command,
# from a carried tree: ROOT/{bin/kiln + its libs, worker/, bench/, corpus/tritonbench/G} (session 9:
# .device-carry/opt2). Checks its inputs first, runs the named slices module by module in the split's order,
# starts no module that would end past WALL_LIMIT seconds (each costs at most BUDGET + GRACE), prints a
# table last and tars the per-module JSON reports and logs into $OUT/<basename of KILN_SUITE_DIR>.tar.gz.
#
#   bash ROOT/bench/gpu/opt2_generalization.sh "dev:0:2 held:0:1"     PART:FROM:COUNT, in that order
# Env: BUDGET (kiln optimize --budget-seconds, default 20), GRACE (default 60), WALL_LIMIT (default 540),
#      CASES (default @largest:3), OPTIMIZE_FLAGS (more kiln optimize flags), KILN_SUITE_DIR (default
#      /tmp/opt2_gen), KILN_PYTHON (default python3), OUT.
set -uo pipefail
t0=$SECONDS
c=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=$c/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_BIN=$c/bin/kiln KILN_PYTHON=${KILN_PYTHON:-python3} KILN_WORKER_DIR=$c/worker KILN_CORPUS=$c/corpus
export PYTHONUNBUFFERED=1 BUDGET=${BUDGET:-20} GRACE=${GRACE:-60} KILN_SUITE_DIR=${KILN_SUITE_DIR:-/tmp/opt2_gen}
limit=${WALL_LIMIT:-540}
OUT=${OUT:-/tmp/opt2_out}
gen=$c/bench/optimize_suite/generalization.sh
# Inputs.
fail() { echo "opt2_generalization: $*" >&2; exit 2; }
# The device tool returns only so many files from $OUT: a suite directory there comes back in part or not at
# all (session 21 lost a command's logs so); the tarball written there last is what comes back.
case "$(realpath -m "$KILN_SUITE_DIR")/" in
  "$(realpath -m "$OUT")"/*) fail "KILN_SUITE_DIR ($KILN_SUITE_DIR) is inside OUT ($OUT): put it elsewhere (/tmp/...); its tarball is written to OUT" ;;
esac
mkdir -p "$OUT" "$KILN_SUITE_DIR"
[ -x "$KILN_BIN" ] || fail "no kiln at $KILN_BIN"
"$KILN_BIN" --version > /dev/null 2>&1 || fail "kiln does not start: $("$KILN_BIN" --version 2>&1 | head -3)"
[ -d "$KILN_WORKER_DIR/kiln_worker" ] || fail "no worker under $KILN_WORKER_DIR"
n=$(ls "$KILN_CORPUS"/tritonbench/G/perf/*_perf.py 2>/dev/null | wc -l)
[ "$n" -eq 123 ] || fail "expected 123 perf harnesses under $KILN_CORPUS, found $n"
"$KILN_PYTHON" -c "import torch, triton" || fail "$KILN_PYTHON cannot import torch and triton"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$KILN_SUITE_DIR/gpu.txt"
echo "kiln $("$KILN_BIN" --version 2>&1 | head -1); budget ${BUDGET}s, grace ${GRACE}s, wall limit ${limit}s"
# Modules.
declare -a ran=() skipped=()
for slice in ${1:?slices: PART:FROM:COUNT ...}; do
  IFS=: read -r part from count <<< "$slice"
  mapfile -t names < <("$gen" list "$part" | tail -n +$((from + 1)) | head -n "$count")
  for name in "${names[@]}"; do
    if [ $((SECONDS - t0 + BUDGET + GRACE)) -gt "$limit" ]; then skipped+=("$part:$name"); continue; fi
    OUT=$KILN_SUITE_DIR/out "$gen" only "$part" "$name"
    ran+=("$part:$name")
  done
done
echo "ran ${#ran[@]}: ${ran[*]}"
[ ${#skipped[@]} -eq 0 ] || echo "not started (wall limit): ${skipped[*]}"
# Table: one row per module that ran (summarize.py's columns, part first).
for part in dev held; do
  d=$KILN_SUITE_DIR/$part/results
  [ -d "$d" ] || continue
  for f in "$d"/*.json; do cp "$f" "$KILN_SUITE_DIR/$part.$(basename "$f")"; done
  echo "== $part"; "$KILN_PYTHON" "$c/bench/optimize_suite/summarize.py" "$d" 2>&1 | tail -n 25
done
# Where each module's time went (kiln optimize's `time:` line, issue 21).
for f in "$KILN_SUITE_DIR"/*/logs/*.log; do
  [ -f "$f" ] && echo "$(basename "$f" .log): $(grep -m1 '^time:' "$f" || echo 'no time line')"
done
tar -czf "$OUT/$(basename "$KILN_SUITE_DIR").tar.gz" -C "$(dirname "$KILN_SUITE_DIR")" "$(basename "$KILN_SUITE_DIR")" 2>/dev/null
echo "opt2_generalization: $((SECONDS - t0)) s"
