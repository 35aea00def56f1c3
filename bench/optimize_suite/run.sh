#!/usr/bin/env bash
# kiln optimize suite on one GPU (H100/H200). Resumable: each kernel's result is kept under
# $KILN_SUITE_DIR (default /tmp/kiln_optimize_suite, survives between commands while the machine is
# held) and copied to $OUT; kernels already done are skipped. Each command stays under 10 minutes
# when given a slice.
#
#   bench/optimize_suite/run.sh suite [FROM] [COUNT]   optimize kernels FROM..FROM+COUNT-1 of kernels.txt
#   bench/optimize_suite/run.sh shard K N               optimize kernels whose index % N == K (one GPU
#                                                      per shard: run N shards at once, CUDA_VISIBLE_DEVICES)
#   bench/optimize_suite/run.sh only NAME...            optimize the named kernels
#   bench/optimize_suite/run.sh autotune [NAME...]     kiln vs exhaustive search of the same grid
#   bench/optimize_suite/run.sh summary                print the tables (also printed after each run)
#
# Env: KERNELS (the list, default kernels.txt), KILN_BIN (default: build/h6/kiln, else build/release/kiln), KILN_PYTHON (python3 with torch +
# triton), BUDGET (per-kernel seconds, default 60), OUT (results folder; default $KILN_SUITE_DIR/out),
# CASES (kiln optimize --cases; default @largest:3, the three largest sizes of the perf harness),
# OPTIMIZE_FLAGS (more kiln optimize flags for every kernel, e.g. "--hard-end-seconds 90"),
# AT_BUDGET (autotune: kiln's budget, default 120 s: the comparison caps kiln by measurements, 25% of
# the grid, and a 45 s budget let it use only 14 of its 32 on matmul_triton2), EX_BUDGET (the exhaustive run's).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${KILN_CORPUS:-$root/../shared/corpus}
[ -d "$corpus/tritonbench" ] || corpus=$root/.device-carry/corpus
G=$corpus/tritonbench/G
state=${KILN_SUITE_DIR:-/tmp/kiln_optimize_suite}
OUT=${OUT:-$state/out}
BUDGET=${BUDGET:-60}
export KILN_PYTHON=${KILN_PYTHON:-python3}
kiln=${KILN_BIN:-}
for c in "$root/build/h6/kiln" "$root/build/release/kiln" "$root/kiln"; do
  [ -z "$kiln" ] && [ -x "$c" ] && kiln=$c
done
[ -x "$kiln" ] || { echo "run.sh: no kiln binary (set KILN_BIN)" >&2; exit 2; }
mkdir -p "$state/results" "$state/logs" "$OUT"
db=$state/kiln.db
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader > "$state/gpu.txt" 2>/dev/null || true

# KERNELS: another list in kernels.txt's format (generalization.sh writes one per part of the split).
mapfile -t rows < <(grep -v '^#' "${KERNELS:-$here/kernels.txt}" | awk 'NF>=2')

optimize_one() {  # name category
  local name=$1 cat=$2 res=$state/results/$1.json log=$state/logs/$1.log
  if [ -s "$res" ]; then echo "== $name: done before (skipped)"; return; fi
  echo "== $name ($cat): budget ${BUDGET}s"
  local t0=$(date +%s.%N)
  timeout $((BUDGET + ${GRACE:-120})) "$kiln" optimize "$G/kernels/$name.py" --budget-seconds "$BUDGET" \
      --cases "${CASES:-@largest:3}" --search-cases largest ${OPTIMIZE_FLAGS:-} --db "$db" --json "$res.tmp" --html "$state/logs/$name.html" \
      -o "$state/logs/$name.optimized.py" > "$log" 2>&1
  local rc=$? t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && [ -s "$res.tmp" ]; then
    "$KILN_PYTHON" - "$res.tmp" "$res" "$cat" "$t0" "$t1" <<'PY'
import json, sys
src, dst, cat, t0, t1 = sys.argv[1:]
j = json.load(open(src)); j["category"] = cat; j["suite_wall_s"] = float(t1) - float(t0)
json.dump(j, open(dst, "w"), indent=1)
PY
    rm -f "$res.tmp"
  else
    echo "{\"task\": \"$name\", \"category\": \"$cat\", \"error\": \"exit $rc\", \"suite_wall_s\": $(awk "BEGIN{print $t1 - $t0}")}" > "$res"
    tail -5 "$log"
  fi
  tail -3 "$log" | sed 's/^/   /'
}

autotune_one() {  # name: exhaustive over the kernel's grid (grids/<name>.json, a larger grid than its own
  # @triton.autotune list; patience off), then kiln's default search limited to 25% of those measurements
  local name=$1 ex=$state/results/autotune_$1.exhaustive.json kj=$state/results/autotune_$1.kiln.json
  local grid=$here/grids/$name.json gridarg=() n=0
  if [ -f "$grid" ]; then
    gridarg=(--grid "$grid")
    n=$("$KILN_PYTHON" -c "import json,math,sys; print(math.prod(len(v) for v in json.load(open(sys.argv[1])).values()))" "$grid")
  fi
  if [ ! -s "$ex" ]; then
    echo "== $name: exhaustive (${n:-?} configs)"
    timeout 560 "$kiln" optimize "$G/kernels/$name.py" --strategy exhaustive --patience 1000000 "${gridarg[@]}" \
        --budget-seconds ${EX_BUDGET:-480} --search-cases largest --no-profile --db "$db" --json "$ex" \
        -o "$state/logs/autotune_$name.exhaustive.py" -q \
        > "$state/logs/autotune_$name.exhaustive.log" 2>&1 || tail -5 "$state/logs/autotune_$name.exhaustive.log"
  fi
  if [ ! -s "$kj" ]; then
    echo "== $name: kiln (default strategy, at most $((n / 4)) measurements)"
    local cap=()
    [ "$n" -gt 0 ] && cap=(--max-evals $((n / 4)))
    timeout 400 "$kiln" optimize "$G/kernels/$name.py" --budget-seconds "${AT_BUDGET:-120}" --search-cases largest "${gridarg[@]}" \
        "${cap[@]}" --no-profile --db "$db" --json "$kj" -o "$state/logs/autotune_$name.kiln.py" -q \
        > "$state/logs/autotune_$name.kiln.log" 2>&1 || tail -5 "$state/logs/autotune_$name.kiln.log"
  fi
  # A/B of the two search picks (search_picks.py: each search's best fixed configuration by its own
  # timings, sources from the records database): timed against each other in one request (kiln eval
  # --baseline: interleaved, one process), 4 rounds alternating which is the candidate. Comparing each
  # pick with the autotuned original in separate processes let the original's per-process autotune pick
  # decide (matmul_triton2's original against itself: 1.00-1.34x).
  local ab=$state/results/autotune_$name.ab.json
  if [ ! -s "$ab" ] && [ -s "$ex" ] && [ -s "$kj" ]; then
    local picks dir=$state/logs/picks_$name
    if ! picks=$("$KILN_PYTHON" "$here/search_picks.py" "$ex" "$kj" "$db" "$dir" 2> "$dir.err"); then
      echo "== $name: no A/B: $(cat "$dir.err")"; return
    fi
    local case same
    case=$(printf '%s' "$picks" | "$KILN_PYTHON" -c "import json,sys; print(json.load(sys.stdin)['case'])")
    same=$(printf '%s' "$picks" | "$KILN_PYTHON" -c "import json,sys; print(json.load(sys.stdin)['same'])")
    echo "== $name: A/B of the search picks on $case (same config: $same)"
    : > "$ab.tmp"
    if [ "$same" != True ]; then
      for r in 1 2 3 4; do
        local cand=kiln base=exhaustive
        [ $((r % 2)) -eq 0 ] && cand=exhaustive base=kiln
        timeout 150 "$kiln" eval --task "$G/kernels/$name.py" --candidate "$dir/${cand}_pick.py" \
            --baseline "$dir/${base}_pick.py" --mode time --case "$case" --policy trusted --no-db --json 2>/dev/null |
          "$KILN_PYTHON" -c "
import json, sys
j = json.load(sys.stdin); c = (j.get('cases') or [{}])[0]; s = c.get('speedup')
k = None if not s else (s if sys.argv[1] == 'kiln' else 1 / s)
print(json.dumps({'round': int(sys.argv[2]), 'candidate': sys.argv[1], 'verdict': j.get('verdict'), 'speedup': s,
                  'kiln_over_exhaustive': k, 'candidate_ms': (c.get('candidate_ms') or {}).get('median'),
                  'baseline_ms': (c.get('reference_ms') or {}).get('median')}))" "$cand" "$r" >> "$ab.tmp"
      done
    fi
    "$KILN_PYTHON" -c "import json,sys; print(json.dumps({'picks': json.loads(sys.argv[2]), 'rounds': [json.loads(l) for l in open(sys.argv[1]) if l.strip()]}))" \
      "$ab.tmp" "$picks" > "$ab" && rm -f "$ab.tmp"
  fi
}

cmd=${1:-summary}
case "$cmd" in
  suite)
    from=${2:-0}; count=${3:-${#rows[@]}}
    for ((i = from; i < from + count && i < ${#rows[@]}; i++)); do
      read -r name cat _ <<< "${rows[$i]}"
      optimize_one "$name" "$cat"
    done ;;
  shard)
    k=${2:?shard K N}; nsh=${3:?shard K N}
    for ((i = k; i < ${#rows[@]}; i += nsh)); do
      read -r name cat _ <<< "${rows[$i]}"
      optimize_one "$name" "$cat"
    done ;;
  only)
    shift
    for n in "$@"; do
      row=$(printf '%s\n' "${rows[@]}" | awk -v n="$n" '$1 == n' | head -1)
      [ -n "$row" ] || { echo "run.sh: $n is not in kernels.txt" >&2; continue; }
      read -r name cat _ <<< "$row"
      optimize_one "$name" "$cat"
    done ;;
  autotune)
    shift
    names=("$@")
    if [ ${#names[@]} -eq 0 ]; then
      mapfile -t names < <(printf '%s\n' "${rows[@]}" | awk '$3 == "autotune" {print $1}' | head -3)
    fi
    for n in "${names[@]}"; do autotune_one "$n"; done ;;
  summary) ;;
  *) echo "usage: run.sh suite [FROM] [COUNT] | autotune [NAME...] | summary" >&2; exit 2 ;;
esac
cp -r "$state/results" "$state/logs" "$state/gpu.txt" "$OUT/" 2>/dev/null
"$KILN_PYTHON" "$here/summarize.py" "$state/results" | tee "$OUT/summary.txt"
