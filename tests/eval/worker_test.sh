#!/usr/bin/env sh
# kiln eval with the REAL worker: the KernelBench example (ok, exit 0), the result cache (second run from
# the cache, --no-cache evaluates again), JSON output, and a batch over one worker.
# Without a GPU the worker runs Triton's interpreter. Skips (77) when $KILN_PYTHON lacks torch/triton or
# the worker package is missing; with --gpu, also when there is no GPU.
set -u
kiln=$1
gpu=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${KILN_CORPUS_DIR:-$root/../shared/corpus}
py=${KILN_PYTHON:-$root/.venv/bin/python3}
[ -f "$root/worker/kiln_worker/__main__.py" ] || { echo "skip: no worker package"; exit 77; }
cuda=$("$py" -c 'import torch, triton; print(torch.cuda.is_available())' 2>/dev/null) || { echo "skip: $py lacks torch/triton"; exit 77; }
if [ "$gpu" = "--gpu" ]; then
  [ "$cuda" = "True" ] || { echo "skip: no GPU"; exit 77; }
  mode=time
else
  mode=check
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {
  name=$1 want=$2 got=$3 file=$4
  shift 4
  if [ "$got" != "$want" ]; then echo "FAIL $name: exit $got, want $want"; cat "$file"; fails=$((fails + 1)); return; fi
  for pat in "$@"; do
    if ! grep -q -- "$pat" "$file"; then echo "FAIL $name: no '$pat' in output:"; cat "$file"; fails=$((fails + 1)); return; fi
  done
  echo "ok   $name"
}
task=$corpus/kernelbench/examples/model_ex_add.py
cand=$corpus/kernelbench/examples/model_new_ex_add_triton.py
[ -f "$task" ] || { echo "skip: no corpus"; exit 77; }
db="--db $tmp/kiln.db --python $py"

"$kiln" eval --task "$task" --candidate "$cand" --mode $mode $db > "$tmp/o" 2>&1
check example 0 $? "$tmp/o" "verdict: ok" "case default: passed" "kernel add_kernel: launches" "versions:.*triton 3.6"
"$kiln" eval --task "$task" --candidate "$cand" --mode $mode $db > "$tmp/o" 2>&1
check example-cached 0 $? "$tmp/o" "verdict: ok  (from cache)"
"$kiln" eval --task "$task" --candidate "$cand" --mode $mode $db --no-cache --json > "$tmp/o" 2>&1
check example-no-cache 0 $? "$tmp/o" '"verdict": "ok"' '"from_cache": false' '"triton_launches"'
if [ "$gpu" = "--gpu" ]; then
  check example-timed 0 0 "$tmp/o" '"speedup"' '"candidate_ms"' '"n_regs"' '"uuid": "GPU-'
fi

# A TritonBench-G module against itself (candidate omitted), and a wrong candidate (exit 1).
"$kiln" eval --task "$corpus/tritonbench/G/kernels/add_example.py" --mode check $db --no-cache > "$tmp/o" 2>&1
check tritonbench-self 0 $? "$tmp/o" "verdict: ok" "task: tritonbench_g/add_example"
"$kiln" eval --task "$task" --mode check $db > "$tmp/o" 2>&1
check kernelbench-needs-candidate 2 $? "$tmp/o" "needs --candidate"
sed 's/out = x + y/out = x - y/' "$cand" > "$tmp/wrong.py"
"$kiln" eval --task "$task" --candidate "$tmp/wrong.py" --mode check $db > "$tmp/o" 2>&1
check wrong 1 $? "$tmp/o" "verdict: mismatch"

# kiln's own format: a task directory (module, bench file, entry named after the directory).
"$kiln" eval --task "$root/examples/softmax" --mode check $db > "$tmp/o" 2>&1
check kiln-dir 0 $? "$tmp/o" "verdict: ok" "task: softmax (kiln)"

# Isolation levels: shared and fresh also give the verdict.
for iso in shared fresh; do
  "$kiln" eval --task "$task" --candidate "$cand" --mode check $db --no-cache --isolation $iso > "$tmp/o" 2>&1
  check isolation-$iso 0 $? "$tmp/o" "verdict: ok"
done

# Batch through the pipeline (check workers, then time_only on the measuring worker; under the interpreter
# only with an explicit --check-workers): the ok pair is checked and re-verified (trials 3 + 1), the wrong
# one stops after its check, the check pair stays on the check workers; every pair keeps its id.
cat > "$tmp/pairs.jsonl" <<JSONL
{"id": "good", "task": "$task", "candidate": "$cand", "mode": "time"}
{"id": "wrong", "task": "$task", "candidate": "$tmp/wrong.py", "mode": "time"}
{"id": "self", "task": "$corpus/tritonbench/G/kernels/add_example.py", "mode": "check"}
JSONL
"$kiln" eval --batch "$tmp/pairs.jsonl" --out "$tmp/r.jsonl" --check-workers 2 --no-db --python "$py" --quiet > "$tmp/o" 2>&1
rc=$?
cat "$tmp/r.jsonl" >> "$tmp/o"
check batch-pipeline 0 $rc "$tmp/o" '"id":"good".*"verdict":"ok"' '"id":"good".*"check_stage"' '"id":"good".*"trials":4' \
  '"id":"wrong".*"verdict":"mismatch"' '"id":"wrong".*"code":"check_stage"' '"id":"self".*"verdict":"ok"'
n=$(wc -l < "$tmp/r.jsonl")
[ "$n" -eq 3 ] && echo "ok   batch-pipeline-lines" || { echo "FAIL batch-pipeline-lines: $n lines, want 3"; fails=$((fails + 1)); }
if grep '"id":"wrong"' "$tmp/r.jsonl" | grep -q '"time_stage_elapsed_s"'; then
  echo "FAIL batch-pipeline-wrong-timed: the wrong pair reached the timing stage"; fails=$((fails + 1))
fi

# Record a transcript, then replay it without a worker.
"$kiln" eval --task "$task" --candidate "$cand" --mode $mode --no-db --python "$py" --record "$tmp/t.jsonl" > "$tmp/o" 2>&1
check record 0 $? "$tmp/o" "verdict: ok"
"$kiln" eval --task "$task" --candidate "$cand" --mode $mode --replay "$tmp/t.jsonl" --python /nonexistent > "$tmp/o" 2>&1
check replay-recorded 0 $? "$tmp/o" "verdict: ok"

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
[ $fails -eq 0 ]
