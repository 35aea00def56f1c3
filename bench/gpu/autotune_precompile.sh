#!/usr/bin/env bash
# Session 22 (issue 21): what compiling an autotuned kernel's configs side by side (worker/kiln_worker/
# precompile.py) saves. For each MODULE:CASE,CASE...: `kiln eval --mode time` of the TritonBench-G original on
# those cases (its autotuner tunes every key), with Triton's serial compile (KILN_AUTOTUNE_COMPILE_THREADS=0)
# and with the default threads, each in a fresh Triton cache, ROUNDS rounds interleaved (off on, then on off).
# Prints per run the wall time, the verdict and the per-case medians, then per module the ratio of the
# median walls (off / on). Logs under $OUT/autotune_precompile.
#   bash ROOT/bench/gpu/autotune_precompile.sh "int8_matmul_quantization:perf_27,perf_28,perf_29"
set -uo pipefail
c=$(cd "$(dirname "$0")/../.." && pwd)
export LD_LIBRARY_PATH=$c/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} KILN_WORKER_DIR=$c/worker
export KILN_PYTHON=${KILN_PYTHON:-python3}
out=${OUT:-/tmp}/autotune_precompile; mkdir -p "$out"
table=$out/table.tsv; : > "$table"
for spec in ${1:?MODULE:CASE,CASE ...}; do
  m=${spec%%:*}; cases=${spec#*:}; k=$c/corpus/tritonbench/G/kernels/$m.py
  [ -f "$k" ] || { echo "no module $k"; continue; }
  args=(); for x in ${cases//,/ }; do args+=(--case "$x"); done
  for r in $(seq "${ROUNDS:-2}"); do
    order="off on"; [ $((r % 2)) -eq 0 ] && order="on off"
    for mode in $order; do
      cache=$(mktemp -d /tmp/kiln_pc_cache.XXXXXX)
      threads=""; [ "$mode" = off ] && threads=0
      t0=$(date +%s.%N)
      TRITON_CACHE_DIR=$cache KILN_AUTOTUNE_COMPILE_THREADS=$threads "$c/bin/kiln" eval --task "$k" --mode time \
        --policy trusted --no-db --json --timeout 500 "${args[@]}" > "$out/$m.$r.$mode.json" 2> "$out/$m.$r.$mode.err"
      t1=$(date +%s.%N)
      rm -rf "$cache"
      python3 - "$out/$m.$r.$mode.json" "$m" "$r" "$mode" "$(python3 -c "print($t1 - $t0)")" "$table" <<'PY'
import json, sys
path, m, r, mode, wall, table = sys.argv[1:]
try:
    j = json.load(open(path))
except Exception as e:
    print(f"{m:<26} round {r} {mode:<3} {float(wall):7.1f} s  unreadable: {e}"); sys.exit()
rt = j.get("runtime_checks") or {}
meds = " ".join(f"{c['name']}={(c.get('candidate_ms') or {}).get('median', float('nan')) * 1e3:.1f}us"
                for c in j.get("cases", []))
print(f"{m:<26} round {r} {mode:<3} {float(wall):7.1f} s  {j.get('verdict')}  ahead {rt.get('autotune_precompiled', 0)}  {meds}")
open(table, "a").write(f"{m}\t{mode}\t{wall}\t{j.get('verdict')}\n")
PY
    done
  done
done
python3 - "$table" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l]
print("\nmodule                     serial s  parallel s  ratio (median walls, kiln eval --mode time)")
for m in dict.fromkeys(r[0] for r in rows):
    off = [float(r[2]) for r in rows if r[0] == m and r[1] == "off"]
    on = [float(r[2]) for r in rows if r[0] == m and r[1] == "on"]
    if off and on:
        a, b = statistics.median(off), statistics.median(on)
        print(f"{m:<26} {a:8.1f}  {b:10.1f}  {a / b:5.2f}x  ({len(off)} + {len(on)} runs)")
PY
