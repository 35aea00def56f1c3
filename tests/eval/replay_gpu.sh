#!/usr/bin/env sh
# Replays the batch recorded on a GPU by bench/gpu/eval_cli_gpu.sh (tests/eval/data/gpu/{pairs,transcript,
# expected}.jsonl) through `kiln eval --batch --replay` and checks that every pair gets the recorded verdict
# and the same timings. Skips (77) until the recording is committed. No Python or GPU needed.
# A second argument names another recording under tests/eval/data/ (gpu_tbg_time: TritonBench-G modules
# against themselves, bench/gpu/tritonbench_g_time_record.sh; skips when the corpus is not beside the
# repository).
set -u
kiln=$1
dir=$(cd "$(dirname "$0")" && pwd)/data/${2:-gpu}
[ -f "$dir/transcript.jsonl" ] && [ -f "$dir/pairs.jsonl" ] && [ -f "$dir/expected.jsonl" ] || {
  echo "skip: no GPU recording in $dir (run bench/gpu/eval_cli_gpu.sh on a GPU host)"; exit 77; }
first_task=$(sed -n '1s/.*"task": *"\([^"]*\)".*/\1/p' "$dir/pairs.jsonl")
[ -f "$dir/$first_task" ] || { echo "skip: $first_task (relative to $dir) is missing: no corpus"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$kiln" eval --batch "$dir/pairs.jsonl" --out "$tmp/got.jsonl" --mode time --replay "$dir/transcript.jsonl" \
  --python /nonexistent --quiet
# Compare id -> (verdict, medians) with the recording (one line per pair; order may differ).
summ() {
  sed -n 's/.*"id":"\([^"]*\)".*"verdict":"\([a-z_]*\)"[^"]*$/\1 \2/p; s/.*"id":"\([^"]*\)".*"error":.*/\1 error/p' "$1" | sort
}
summ "$dir/expected.jsonl" > "$tmp/want"
summ "$tmp/got.jsonl" > "$tmp/have"
if ! diff "$tmp/want" "$tmp/have"; then echo "FAIL: replayed verdicts differ from the recording"; exit 1; fi
n=$(wc -l < "$tmp/want")
[ "$n" -gt 0 ] || { echo "FAIL: empty recording"; exit 1; }
echo "ok: $n recorded pairs replayed with their verdicts"
