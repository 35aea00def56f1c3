#!/usr/bin/env bash
# Every TritonBench-G module of the corpus against itself, timed as a user would run it (issue 16):
#   kiln eval --batch --mode time (default check workers sharing the GPU, then the timing stage alone).
#
#   bench/gpu/tritonbench_g_time_sweep.sh [LIMIT_S]
#
# LIMIT_S (default 540) bounds the batch so that the command fits a 10-minute GPU call; a batch cut off
# by it is continued by the next call with RESUME=FILE (the results so far, e.g. the last call's
# tbg_time.jsonl): `kiln eval --resume` keeps them and evaluates only the modules without a result.
# ONLY="a b c" sweeps the named modules alone. PER_MODULE_S (default 180) is each module's limit;
# CHECK_WORKERS (default: kiln's) the check workers sharing the GPU.
# Layout: run from anywhere; the binary is $KILN_BIN, else <dir>/bin/kiln beside bench/ (a carried copy,
# see bench/results/tritonbench_g_time.md), else build/release/kiln; the worker is <dir>/worker; the
# corpus is $KILN_CORPUS_DIR, else <dir>/corpus, else ../shared/corpus.
# Writes to $OUT: tbg_time.jsonl (one result line per module), summary.txt, stderr.txt, nvidia_smi.csv.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
limit=${1:-540}
bin=${KILN_BIN:-}
[ -n "$bin" ] || { [ -x "$root/bin/kiln" ] && bin=$root/bin/kiln; } || bin=$root/build/release/kiln
corpus=${KILN_CORPUS_DIR:-}
[ -n "$corpus" ] || { [ -d "$root/corpus" ] && corpus=$root/corpus; } || corpus=$root/../shared/corpus
export KILN_WORKER_DIR=${KILN_WORKER_DIR:-$root/worker}
export KILN_PYTHON=${KILN_PYTHON:-python3}
export KILN_CORPUS_DIR=$corpus
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kiln-tbg-out}
mkdir -p "$OUT"
G=$corpus/tritonbench/G/kernels
[ -x "$bin" ] && [ -d "$G" ] || { echo "need $bin and $G" >&2; exit 2; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,memory.total --format=csv > "$OUT/nvidia_smi.csv" 2>&1

pairs=$OUT/tbg_pairs.jsonl
if [ -n "${ONLY:-}" ]; then
  for k in $ONLY; do echo "$G/$k.py"; done
else
  ls "$G"/*.py
fi | python3 -c '
import json, os, sys
for p in sys.stdin:
    p = p.strip()
    print(json.dumps({"id": os.path.basename(p)[:-3], "task": os.path.abspath(p), "candidate": None}))' > "$pairs"

res=$OUT/tbg_time.jsonl
rm -f "$res"
resume=()
if [ -n "${RESUME:-}" ] && [ -s "$RESUME" ]; then
  # a result line is matched to its pair by `line`: the pairs file must be the same list (same order)
  cp "$RESUME" "$res"
  resume=(--resume)
fi
t0=$SECONDS
# (kiln eval --resume aborts when no pair is left to evaluate: nothing to do then)
left=$(python3 -c '
import json, sys
done = set()
for l in open(sys.argv[1]) if len(sys.argv) > 2 else []:
    try:
        j = json.loads(l)
    except ValueError:
        continue
    if "error" not in j:
        done.add(j.get("line"))
print(sum(1 for i, _ in enumerate(open(sys.argv[-1]), 1) if i not in done))' ${resume:+"$res"} "$pairs")
[ "$left" -gt 0 ] && timeout "$limit" "$bin" eval --batch "$pairs" --out "$res" --mode time --no-db --timeout "${PER_MODULE_S:-180}" \
  ${CHECK_WORKERS:+--check-workers "$CHECK_WORKERS"} "${resume[@]}" > /dev/null 2> "$OUT/stderr.txt"
echo "batch rc=$? in $((SECONDS - t0)) s, $(wc -l < "$res") of $(wc -l < "$pairs") results" | tee "$OUT/times.txt"
python3 "$(dirname "$0")/summarize_time_sweep.py" "$res" > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
