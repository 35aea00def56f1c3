#!/usr/bin/env bash
# Times `kiln analyze` over every file of the TritonBench-G corpus on one core (target: < 1 s for
# all 123 files). Prints the measured figure: best and median wall time of N runs.
# Usage: bench/analyze_corpus.sh [KILN_BINARY] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kiln=${1:-$root/build/release/kiln}
runs=${2:-10}
corpus=${KILN_CORPUS_DIR:-$root/../shared/corpus}/tritonbench/G/kernels
files=("$corpus"/*.py)
[ -x "$kiln" ] || { echo "kiln binary not found: $kiln" >&2; exit 1; }
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
# Warm the page cache once; check the run is clean.
"${pin[@]}" "$kiln" analyze --json "${files[@]}" >/dev/null
# Wall time is what the target is about; CPU time (user + sys) is also printed because on a shared,
# loaded machine the wall time includes waiting for the core.
times=()
cpus=()
TIMEFORMAT='%R %U %S'
for _ in $(seq "$runs"); do
  t=$( { time "${pin[@]}" "$kiln" analyze --json "${files[@]}" >/dev/null; } 2>&1 )
  read -r wall usr sys <<<"$t"
  times+=("$wall")
  cpus+=("$(echo "$usr + $sys" | bc -l)")
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
csorted=($(printf '%s\n' "${cpus[@]}" | sort -n))
printf 'kiln analyze --json over %d files, one core, %d runs: wall best %.3f s, median %.3f s; CPU best %.3f s, median %.3f s (target < 1 s)\n' \
  "${#files[@]}" "$runs" "${sorted[0]}" "${sorted[$(( runs / 2 ))]}" "${csorted[0]}" "${csorted[$(( runs / 2 ))]}"
