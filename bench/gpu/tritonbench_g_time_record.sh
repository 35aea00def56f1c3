#!/usr/bin/env bash
# Records a handful of TritonBench-G modules against themselves in mode time, with the worker exchanges,
# for the CI replay test eval_replay_tbg_time (tests/eval/data/gpu_tbg_time/):
#   bench/gpu/tritonbench_g_time_record.sh NAME...
# Run from a carried copy (tritonbench_g_time_sweep.sh): the corpus must be reachable as ../shared/corpus
# beside the copy's root, as it is beside a checkout (the pairs' paths are relative to the data folder).
# --record runs each pair whole (no check workers), so the transcript holds whole `time` exchanges.
# Writes $OUT/rec_{pairs,transcript,expected}.jsonl: copy them to tests/eval/data/gpu_tbg_time/ as
# pairs.jsonl, transcript.jsonl, expected.jsonl.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${KILN_BIN:-}
[ -n "$bin" ] || { [ -x "$root/bin/kiln" ] && bin=$root/bin/kiln; } || bin=$root/build/release/kiln
export KILN_WORKER_DIR=${KILN_WORKER_DIR:-$root/worker} KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kiln-tbg-out}
mkdir -p "$OUT"
[ -d "$root/../shared/corpus" ] || { [ -d "$root/corpus" ] && mkdir -p "$root/../shared" && ln -sfn "$root/corpus" "$root/../shared/corpus"; }
d=$root/tests/eval/data/gpu_tbg_time
mkdir -p "$d"
for k in "$@"; do
  printf '{"id": "%s", "task": "../../../../../shared/corpus/tritonbench/G/kernels/%s.py", "candidate": null}\n' "$k" "$k"
done > "$d/pairs.jsonl"
rm -f "$OUT/rec_transcript.jsonl"
timeout "${LIMIT_S:-300}" "$bin" eval --batch "$d/pairs.jsonl" --out "$OUT/rec_expected.jsonl" --mode time --no-db \
  --timeout "${PER_MODULE_S:-120}" --record "$OUT/rec_transcript.jsonl" 2> "$OUT/rec_stderr.txt"
echo "record rc=$?"
cp "$d/pairs.jsonl" "$OUT/rec_pairs.jsonl"
python3 "$(dirname "$0")/summarize_time_sweep.py" "$OUT/rec_expected.jsonl"
