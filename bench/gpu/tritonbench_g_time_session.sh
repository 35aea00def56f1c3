#!/usr/bin/env bash
# Issue 16's GPU calls (one 10-minute command each), from a carried copy (see tritonbench_g_time_sweep.sh):
#   bench/gpu/tritonbench_g_time_session.sh sweep N [LIMIT_S]   every module, N batches at once
#                        (tritonbench_g_time_shards.sh; RESUME_DIR continues), beside it the RNG probe and
#                        the plain self-repeat check of SELF_REPEAT ("name:cases name:cases ...")
#   bench/gpu/tritonbench_g_time_session.sh alone NAME...       the named modules in one batch, alone
#                        (default check workers), beside nothing
# Results under $OUT, the shards tarred to $OUT/shards.tar.gz (at most 8 files come back from a call).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export PYTHONUNBUFFERED=1
[ -d "$root/corpus" ] && export KILN_CORPUS_DIR=${KILN_CORPUS_DIR:-$root/corpus}
OUT=${OUT:-/tmp/kiln-tbg-out}
mkdir -p "$OUT"
phase=${1:?sweep or alone}; shift
self_repeat() {
  for item in ${SELF_REPEAT:-}; do
    timeout 200 "${KILN_PYTHON:-python3}" "$here/tritonbench_g_self_repeat.py" --cases "${item#*:}" --out "$OUT/self_repeat.jsonl" \
      "${item%%:*}" 2>&1 | grep -v "^warmup" | cut -c1-400
  done > "$OUT/self_repeat.log"
}
case "$phase" in
  sweep)
    (cd "$root" && PYTHONPATH=worker timeout 60 "${KILN_PYTHON:-python3}" "$here/rng_capture_probe.py" > "$OUT/rng_probe.txt" 2>&1)
    self_repeat &
    sr=$!
    OUT=$OUT/shards bash "$here/tritonbench_g_time_shards.sh" "$1" "${2:-530}"
    wait $sr
    cp "$OUT/shards/tbg_time.jsonl" "$OUT/shards/summary.txt" "$OUT/"
    tar -czf "$OUT/shards.tar.gz" -C "$OUT" shards && rm -rf "$OUT/shards" ;;
  alone)
    self_repeat &
    sr=$!
    ONLY="$*" bash "$here/tritonbench_g_time_sweep.sh" "${LIMIT_S:-400}"
    wait $sr
    rm -f "$OUT/tbg_pairs.jsonl" ;;
esac
