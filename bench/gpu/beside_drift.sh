#!/usr/bin/env bash
# Session 21 (issue 21): does an autotuned original run slower when timed beside another copy of itself
# than alone? For each module: kiln eval --mode time of the original against itself as --baseline
# (interleaved in one request), ROUNDS times, then the per-case medians of both copies; with
# TRITON_PRINT_AUTOTUNING=1 the worker's stderr (under $OUT/beside_drift) shows each copy's picks.
#   bash ROOT/bench/gpu/beside_drift.sh "chunk_delta_fwd:perf_6,perf_8 max_reduction:perf_9"
set -uo pipefail
c=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=$c/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} KILN_WORKER_DIR=$c/worker
export KILN_PYTHON=${KILN_PYTHON:-python3} TRITON_PRINT_AUTOTUNING=1
out=${OUT:-/tmp}/beside_drift; mkdir -p "$out"
for spec in ${1:?MODULE:CASE,CASE ...}; do
  m=${spec%%:*}; cases=${spec#*:}; k=$c/corpus/tritonbench/G/kernels/$m.py
  args=(); for x in ${cases//,/ }; do args+=(--case "$x"); done
  for r in $(seq "${ROUNDS:-2}"); do
    "$c/bin/kiln" eval --task "$k" --baseline "$k" --mode time --policy trusted --no-db --json --timeout 300 \
      "${args[@]}" > "$out/$m.$r.json" 2> "$out/$m.$r.err"
    python3 - "$out/$m.$r.json" "$m" "$r" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], sys.argv[3], "unreadable:", e); sys.exit()
for c in j.get("cases", []):
    cm, rm = (c.get("candidate_ms") or {}).get("median"), (c.get("reference_ms") or {}).get("median")
    print(f"{sys.argv[2]:<18} round {sys.argv[3]} {c['name']:<8} copy {cm and round(cm * 1e3, 2)} us, "
          f"baseline copy {rm and round(rm * 1e3, 2)} us, {c.get('timing_method')}, verdict {j.get('verdict')}")
PY
  done
done
