#!/usr/bin/env bash
# Where the time of an original's own timed run goes (kiln optimize's "baseline" phase, issue 21): runs
# `kiln eval --mode time --policy trusted --isolation shared` of TritonBench-G modules on their CASES (default: the
# three largest perf sizes, as the suite's optimize) with the worker's Python profiler on (KILN_WORKER_PROFILE),
# and copies each request's profile (pstats + the top functions as text) to $OUT/eval_profile/<module>/.
#   bash ROOT/bench/gpu/eval_profile.sh swiglu_backward max_reduction
# ROOT: the carried tree (bin/kiln + libs, worker/, corpus/tritonbench/G). Env: CASES (kiln eval --case ...,
# space-separated; default @largest:3), TIMEOUT (default 200), KILN_PYTHON (default python3), OUT.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
c=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: eval_profile.sh MODULE..." >&2; exit 2; }
export KILN_PYTHON=${KILN_PYTHON:-python3} KILN_WORKER_DIR=$c/worker PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/eval_profile_out}
G=$c/corpus/tritonbench/G
for m in "$@"; do
  [ -f "$G/kernels/$m.py" ] || { echo "eval_profile: no module $G/kernels/$m.py" >&2; continue; }
  d=$OUT/eval_profile/$m
  mkdir -p "$d"
  cases=()
  for x in ${CASES:-@largest:3}; do cases+=(--case "$x"); done
  t0=$SECONDS
  KILN_WORKER_PROFILE=$d timeout $((${TIMEOUT:-200} + 30)) "$c/bin/kiln" eval --task "$G/kernels/$m.py" --mode time \
    --policy trusted --isolation shared --no-db --timeout "${TIMEOUT:-200}" --json "${cases[@]}" > "$d/result.json" 2> "$d/stderr.txt"
  echo "$m: rc $? in $((SECONDS - t0)) s; phases: $(python3 -c "
import json,sys
try:
    r=json.load(open('$d/result.json'))
    print(r.get('verdict'), json.dumps(r.get('phases_s') or r.get('timings', {}).get('phases_s')))
except Exception as e:
    print('no result:', e)")"
done
