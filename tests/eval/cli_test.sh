#!/usr/bin/env sh
# kiln eval end to end without Python: usage errors, task diagnostics, static rejections (no worker is
# started: --python points at a program that does not exist), replay, exit codes, JSON, batch errors.
set -u
kiln=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/tests/eval/data
relu=$root/tests/candidates/tasks/relu.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # check NAME WANT_RC GOT_RC FILE PATTERN...
  name=$1 want=$2 got=$3 file=$4
  shift 4
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, want $want"; cat "$file"; fails=$((fails + 1)); return
  fi
  for pat in "$@"; do
    if ! grep -q -- "$pat" "$file"; then
      echo "FAIL $name: no '$pat' in output:"; cat "$file"; fails=$((fails + 1)); return
    fi
  done
  echo "ok   $name"
}
nopy="--python /nonexistent/python3 --no-db"

"$kiln" eval > "$tmp/o" 2>&1; check usage-none 2 $? "$tmp/o" "either --task"
"$kiln" eval --task "$relu" --batch x.jsonl > "$tmp/o" 2>&1; check usage-both 2 $? "$tmp/o" "either --task"
"$kiln" eval --task "$relu" --mode fast > "$tmp/o" 2>&1; check usage-mode 2 $? "$tmp/o" "mode"

"$kiln" eval --task "$tmp/missing.py" $nopy > "$tmp/o" 2>&1; check task-missing 2 $? "$tmp/o" "missing.py: error: no such task file"
printf 'import torch\n\nclass Model:\n    pass\n' > "$tmp/bad_task.py"
"$kiln" eval --task "$tmp/bad_task.py" $nopy > "$tmp/o" 2>&1
check task-diagnostic 2 $? "$tmp/o" "bad_task.py:3:1: error: kernelbench task has no top-level function 'get_inputs()'" "^    \^"
printf 'def f(:\n' > "$tmp/syntax_task.py"
"$kiln" eval --task "$tmp/syntax_task.py" $nopy > "$tmp/o" 2>&1; check task-syntax 2 $? "$tmp/o" "syntax_task.py:1:" "error:"

# Static rejection: decided without a worker (none can start here), exit 1, reason with a location.
printf 'import torch\nimport threading\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n\nclass ModelNew:\n    pass\n' > "$tmp/thread.py"
"$kiln" eval --task "$relu" --candidate "$tmp/thread.py" $nopy > "$tmp/o" 2>&1
check static-reject 1 $? "$tmp/o" "verdict: rejected" "thread.py:2:8: process_spawn"
"$kiln" eval --task "$relu" --candidate "$tmp/thread.py" $nopy --json > "$tmp/o" 2>&1
check static-reject-json 1 $? "$tmp/o" '"verdict": "rejected"' '"code": "process_spawn"' '"line": 2'
printf 'import torch\nclass ModelNew(\n' > "$tmp/syntax.py"
"$kiln" eval --task "$relu" --candidate "$tmp/syntax.py" $nopy > "$tmp/o" 2>&1
check static-syntax 1 $? "$tmp/o" "verdict: compile_error" "syntax_error"
printf 'import torch\nimport triton\n@triton.jit\ndef k(x):\n    pass\n' > "$tmp/noentry.py"
"$kiln" eval --task "$relu" --candidate "$tmp/noentry.py" $nopy > "$tmp/o" 2>&1
check static-missing-entry 1 $? "$tmp/o" "verdict: compile_error" "missing_entry"

# A candidate that passes the static checks needs a worker: with none, an infrastructure error (2).
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" $nopy > "$tmp/o" 2>&1
check no-worker 2 $? "$tmp/o" "cannot start the worker"

# Replay of a hand-written GPU transcript: timings, compile facts, clocks, versions.
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --replay "$data/replay_relu.jsonl" --mode time > "$tmp/o" 2>&1
check replay-summary 0 $? "$tmp/o" "verdict: ok" "speedup: 1.512x \[1.430, 1.580\]" "kernel relu_kernel: launches 412  regs 16  spills 0" \
  "WARNING: clock moved" "GPU-00000000-hand-written" "triton 3.6.0"
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --replay "$data/replay_relu.jsonl" --mode time --json > "$tmp/o" 2>&1
check replay-json 0 $? "$tmp/o" '"speedup": 1.512' '"n_regs": 16' '"hash": "072e6eaf0b495369"'
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --replay "$data/replay_relu.jsonl" --mode check > "$tmp/o" 2>&1
check replay-miss 2 $? "$tmp/o" "no recorded response"

# --baseline: the candidate timed against another version of the code (an A/B); the baseline is part of
# what was measured (a transcript without it does not answer), and it needs mode time.
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --baseline "$data/relu_baseline.py" \
  --replay "$data/replay_relu_baseline.jsonl" --mode time > "$tmp/o" 2>&1
check baseline-summary 0 $? "$tmp/o" "verdict: ok" "baseline:  5.7 us" "speedup: 1.390x \[1.330, 1.440\]"
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --baseline "$data/relu_baseline.py" \
  --replay "$data/replay_relu_baseline.jsonl" --mode time --json > "$tmp/o" 2>&1
check baseline-json 0 $? "$tmp/o" '"reference_is": "baseline"' '"hash": "5b0c2456c67501c1"'
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" \
  --replay "$data/replay_relu_baseline.jsonl" --mode time > "$tmp/o" 2>&1
check baseline-is-part-of-the-key 2 $? "$tmp/o" "no recorded response"
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --baseline "$data/relu_baseline.py" $nopy > "$tmp/o" 2>&1
check baseline-needs-time 2 $? "$tmp/o" "--baseline needs --mode time"
"$kiln" eval --task "$relu" --candidate "$data/relu_candidate.py" --baseline "$tmp/nope.py" --mode time $nopy > "$tmp/o" 2>&1
check baseline-missing-file 2 $? "$tmp/o" "nope.py"

# Batch: bad lines become error lines, good ones results; replay answers; exit 1 (some pairs failed).
cat > "$tmp/pairs.jsonl" <<JSONL
{"id": "good", "task": "$relu", "candidate": "$data/relu_candidate.py", "mode": "time"}
not json
{"id": "no-task", "task": "$tmp/missing.py", "candidate": "$data/relu_candidate.py"}
{"id": "static", "task": "$relu", "candidate": "$tmp/thread.py"}

{"id": "no-candidate-file", "task": "$relu", "candidate": "$tmp/nope.py"}
JSONL
"$kiln" eval --batch "$tmp/pairs.jsonl" --out "$tmp/results.jsonl" --replay "$data/replay_relu.jsonl" --mode time > "$tmp/o" 2>&1
rc=$?
cat "$tmp/results.jsonl" >> "$tmp/o"
check batch 1 $rc "$tmp/o" '"id":"good".*"verdict":"ok"' '"error".*"line":2' 'no such task file.*"id":"no-task"' \
  '"id":"static".*"verdict":"rejected"' '"error".*"id":"no-candidate-file"' "5/5"
n=$(wc -l < "$tmp/results.jsonl")
[ "$n" -eq 5 ] && echo "ok   batch-lines" || { echo "FAIL batch-lines: $n lines, want 5"; fails=$((fails + 1)); }

# --resume: results already in --out (by pairs-file line) are kept, error lines and the rest run again.
grep -v '"id":"good"' "$tmp/results.jsonl" > "$tmp/partial.jsonl"
printf '{"line": 6, "torn' >> "$tmp/partial.jsonl"   # a line cut off by a kill
cp "$tmp/partial.jsonl" "$tmp/resumed.jsonl"
"$kiln" eval --batch "$tmp/pairs.jsonl" --out "$tmp/resumed.jsonl" --replay "$data/replay_relu.jsonl" --mode time \
  --resume > "$tmp/o" 2>&1
rc=$?
cat "$tmp/resumed.jsonl" >> "$tmp/o"
check resume 1 $rc "$tmp/o" "resuming: 1 pair(s) already have results" '"id":"good".*"verdict":"ok"' \
  '"id":"static".*"verdict":"rejected"'
n=$(wc -l < "$tmp/resumed.jsonl")
[ "$n" -eq 5 ] && echo "ok   resume-lines" || { echo "FAIL resume-lines: $n lines, want 5"; cat "$tmp/resumed.jsonl"; fails=$((fails + 1)); }
n=$(grep -c '"id":"static"' "$tmp/resumed.jsonl")
[ "$n" -eq 1 ] && echo "ok   resume-not-repeated" || { echo "FAIL resume-not-repeated: $n static lines"; fails=$((fails + 1)); }
"$kiln" eval --batch "$tmp/pairs.jsonl" --resume --replay "$data/replay_relu.jsonl" > "$tmp/o" 2>&1
check resume-needs-out 2 $? "$tmp/o" "--resume needs --out"

# memory_hint_bytes (the batch admission's estimate of a pair's GPU peak until a result teaches it): validated;
# never sent to the worker (the transcript still answers); it only schedules the pair, so --resume matches a pair
# whose hint changed.
printf '{"id": "hinted", "task": "%s", "candidate": "%s", "mode": "time", "memory_hint_bytes": 1073741824}\n' \
  "$relu" "$data/relu_candidate.py" > "$tmp/hint.jsonl"
"$kiln" eval --batch "$tmp/hint.jsonl" --out "$tmp/hint_out.jsonl" --replay "$data/replay_relu.jsonl" > "$tmp/o" 2>&1
rc=$?
cat "$tmp/hint_out.jsonl" >> "$tmp/o"
check hint-batch 0 $rc "$tmp/o" '"id":"hinted".*"verdict":"ok"'
sed 's/1073741824/2147483648/' "$tmp/hint.jsonl" > "$tmp/hint2.jsonl"
"$kiln" eval --batch "$tmp/hint2.jsonl" --out "$tmp/hint_out.jsonl" --replay "$data/replay_relu.jsonl" --resume > "$tmp/o" 2>&1
check hint-resume 0 $? "$tmp/o" "resuming: 1 pair(s) already have results"
printf '{"id": "bad-hint", "task": "%s", "candidate": null, "memory_hint_bytes": -1}\n' "$relu" > "$tmp/hint3.jsonl"
"$kiln" eval --batch "$tmp/hint3.jsonl" $nopy > "$tmp/o" 2>&1
check hint-invalid 1 $? "$tmp/o" "hint3.jsonl:1:1: error: key 'memory_hint_bytes': expected an integer number of bytes >= 0, got -1"

# Records: a static rejection is recorded in the database; a second run is answered the same way.
"$kiln" eval --task "$relu" --candidate "$tmp/thread.py" --python /nonexistent/python3 --db "$tmp/kiln.db" > "$tmp/o" 2>&1
check record-static 1 $? "$tmp/o" "verdict: rejected"
[ -s "$tmp/kiln.db" ] && echo "ok   db-created" || { echo "FAIL db-created"; fails=$((fails + 1)); }

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
[ $fails -eq 0 ]
