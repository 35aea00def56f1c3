#!/usr/bin/env bash
# The TritonBench-G time sweep (tritonbench_g_time_sweep.sh) as N batches running at once on one GPU, for
# when the device time does not allow the modules one after another (a module's timing stage takes about
# 20 s on an H100: 123 modules are 40 minutes in one batch). Timings taken this way share the GPU and
# are not comparable; verdicts are what it is for (a module that fails here is re-run alone).
#
#   bench/gpu/tritonbench_g_time_shards.sh N [LIMIT_S]
#
# Modules are dealt round-robin over the N batches (ONLY="a b c" limits them); each batch has
# CHECK_WORKERS check workers (default 2) and its own results under $OUT/shard_K/. RESUME_DIR=DIR continues
# the shards of an earlier call (DIR/shard_K/tbg_time.jsonl, same N and module list). Then
# $OUT/tbg_time.jsonl holds every result line and $OUT/summary.txt their summary.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:?number of batches}
limit=${2:-540}
root=$(cd "$here/../.." && pwd)
corpus=${KILN_CORPUS_DIR:-}
[ -n "$corpus" ] || { [ -d "$root/corpus" ] && corpus=$root/corpus; } || corpus=$root/../shared/corpus
OUT=${OUT:-/tmp/kiln-tbg-out}
if [ -n "${ONLY:-}" ]; then names=($ONLY); else
  names=($(ls "$corpus/tritonbench/G/kernels/"*.py | xargs -n1 basename | sed 's/\.py$//')); fi
pids=()
for ((k = 0; k < n; k++)); do
  mine=()
  for ((i = k; i < ${#names[@]}; i += n)); do mine+=("${names[i]}"); done
  [ ${#mine[@]} -gt 0 ] || continue
  mkdir -p "$OUT/shard_$k"
  prev=${RESUME_DIR:+$RESUME_DIR/shard_$k/tbg_time.jsonl}
  OUT=$OUT/shard_$k ONLY="${mine[*]}" CHECK_WORKERS=${CHECK_WORKERS:-2} RESUME=${prev:-} \
    bash "$here/tritonbench_g_time_sweep.sh" "$limit" > "$OUT/shard_$k/log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
cat "$OUT"/shard_*/tbg_time.jsonl > "$OUT/tbg_time.jsonl" 2>/dev/null
cat "$OUT"/shard_*/times.txt
python3 "$here/summarize_time_sweep.py" "$OUT/tbg_time.jsonl" > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
