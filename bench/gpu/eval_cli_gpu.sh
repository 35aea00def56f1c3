#!/usr/bin/env bash
# GPU run of `kiln eval` (the C++ side: WorkerRunner, EvalPool, records), from the repository root:
#   OUT=/some/dir bash bench/gpu/eval_cli_gpu.sh [--sweep]
# Needs build/release/kiln (or $KILN) and $KILN_PYTHON (else .venv/bin/python3). Writes to $OUT:
#   ctest_gpu.txt            CTest label gpu for tests/eval (candidate suites with expect-gpu, the example timed)
#   transcript.jsonl, pairs.jsonl, expected.jsonl
#                            a recorded batch (candidates + KernelBench example, mode time): copy the three
#                            files to tests/eval/data/gpu/ to turn on the eval_replay_gpu test
#   repeat.jsonl, repeat.txt the same candidate timed 5 times in one batch (--no-cache): spread of the medians
#   isolation.txt            wall time of one batch under fork vs fresh isolation (throughput ratio)
#   tritonbench_g.jsonl, tritonbench_g.txt   (--sweep) every TritonBench-G module against itself, mode time
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
OUT=${OUT:-$root/build/gpu-eval}
mkdir -p "$OUT"
kiln=${KILN:-$root/build/release/kiln}
py=${KILN_PYTHON:-$root/.venv/bin/python3}
[[ -x "$py" ]] || py=python3
export KILN_PYTHON=$py
corpus=${KILN_CORPUS_DIR:-$root/../shared/corpus}
export KILN_CORPUS_DIR=$corpus
db="$OUT/kiln.db"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm --format=csv > "$OUT/nvidia_smi.csv" 2>&1 || true

# 1. CTest's gpu label for the eval tests (NO_CTEST=1 skips it: a carried binary has no build tree).
[ -n "${NO_CTEST:-}" ] || (ctest --test-dir build/release -L gpu -R '^eval_' --output-on-failure 2>&1 || true) | tee "$OUT/ctest_gpu.txt"

# 2. Record a batch for replay tests: paths relative to tests/eval/data/gpu/ (where the files will live).
rel() { python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$1" "$root/tests/eval/data/gpu"; }
# Corpus paths as CI sees them: the corpus beside the repository (on a GPU host session_env.sh links
# ../shared/corpus to the carried copy), not the carried folder itself.
[ -d "$root/../shared/corpus" ] && corpus=$root/../shared/corpus
: > "$OUT/pairs.jsonl"
for f in tests/candidates/adversarial/*.py tests/candidates/faulty/*.py tests/candidates/honest/*.py; do
  task=$(sed -n 's/^# task: *//p' "$f" | head -1)
  extra=""
  case "$task" in
    relu|matmul|tbg_*) t="$root/tests/candidates/tasks/$task.py" ;;
    corpus:*) t="$corpus/${task#corpus:}" ;;
    kiln:tests/*)   # kiln-format test tasks (the racing scatter: its bench has GPU-sized cases)
      d="$root/${task#kiln:}"; n=$(basename "$d"); t="$d/$n.py"
      extra=$(printf ', "bench": "%s", "entry": "%s", "format": "kiln"' "$(rel "$d/bench.py")" "$n") ;;
    *) continue ;;
  esac
  cand=$(sed -n 's/^# candidate: *//p' "$f" | head -1)
  case "$cand" in
    corpus:*) c="$corpus/${cand#corpus:}" ;;
    *) c="$root/$f" ;;
  esac
  policy=$(sed -n 's/^# policy: *//p' "$f" | head -1)
  timeout=$(sed -n 's/^# timeout_s: *//p' "$f" | head -1)
  case "$f" in */faulty/*) policy=${policy:-trusted} ;; esac
  printf '{"id": "%s", "task": "%s"%s, "candidate": "%s", "policy": "%s", "timeout_s": %s}\n' \
    "${f#tests/candidates/}" "$(rel "$t")" "$extra" "$(rel "$c")" "${policy:-strict}" "${timeout:-20}" >> "$OUT/pairs.jsonl"
done
# The pairs file must sit where its relative paths point from: record from tests/eval/data/gpu/.
gdir="$root/tests/eval/data/gpu"
mkdir -p "$gdir"
cp "$OUT/pairs.jsonl" "$gdir/pairs.jsonl"
rm -f "$OUT/transcript.jsonl"
"$kiln" eval --batch "$gdir/pairs.jsonl" --out "$OUT/expected.jsonl" --mode time --no-db --compile-workers 0 \
  --gpus 1 --record "$OUT/transcript.jsonl" 2> "$OUT/record.stderr"
echo "record batch exit $? (copy $OUT/{pairs,transcript,expected}.jsonl to tests/eval/data/gpu/)"

# 3. Timing repeatability: one honest candidate 5 times in one batch.
: > "$OUT/repeat_pairs.jsonl"
for i in 1 2 3 4 5; do
  printf '{"id": "run%s", "task": "%s", "candidate": "%s"}\n' "$i" \
    "$corpus/kernelbench/examples/model_ex_add.py" "$corpus/kernelbench/examples/model_new_ex_add_triton.py" >> "$OUT/repeat_pairs.jsonl"
done
"$kiln" eval --batch "$OUT/repeat_pairs.jsonl" --out "$OUT/repeat.jsonl" --mode time --no-cache --db "$db" --gpus 1 \
  --compile-workers 0 2> "$OUT/repeat.stderr"
python3 - "$OUT/repeat.jsonl" <<'PY' | tee "$OUT/repeat.txt"
import json, sys
med = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    for c in r.get("result", {}).get("cases", []):
        if c.get("candidate_ms"):
            med.append((c["candidate_ms"]["median"], c.get("speedup")))
ms = [m for m, _ in med]
if ms:
    print("candidate medians (ms):", ["%.5f" % m for m in ms])
    print("speedups:", med and [s for _, s in med])
    print("spread of medians: %.2f%% ((max-min)/min)" % ((max(ms) - min(ms)) / min(ms) * 100))
PY

# 4. Throughput: the same batch (honest + faulty candidates, mode check) under fork vs fresh isolation
# (NO_ISOLATION=1 skips it).
[ -n "${NO_ISOLATION:-}" ] || for iso in fork fresh; do
  s=$(date +%s.%N)
  "$kiln" eval --batch "$OUT/pairs.jsonl" --out "$OUT/iso_$iso.jsonl" --mode check --no-db --isolation $iso \
    --quiet 2>/dev/null
  e=$(date +%s.%N)
  echo "$iso $(python3 -c "print(round($e - $s, 1))") s for $(wc -l < "$OUT/pairs.jsonl") pairs"
done | tee "$OUT/isolation.txt"

# 5. (--sweep) every TritonBench-G module against itself, timed.
if [[ "${1:-}" == "--sweep" ]]; then
  : > "$OUT/tbg_pairs.jsonl"
  for f in "$corpus"/tritonbench/G/kernels/*.py; do
    printf '{"id": "%s", "task": "%s", "candidate": null, "timeout_s": 180}\n' "$(basename "$f" .py)" "$f" >> "$OUT/tbg_pairs.jsonl"
  done
  "$kiln" eval --batch "$OUT/tbg_pairs.jsonl" --out "$OUT/tritonbench_g.jsonl" --mode time --db "$db" 2> "$OUT/tbg.stderr"
  python3 - "$OUT/tritonbench_g.jsonl" <<'PY' | tee "$OUT/tritonbench_g.txt"
import collections, json, sys
c = collections.Counter(); bad = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    v = r.get("verdict", "error")
    c[v] += 1
    if v != "ok":
        res = r.get("result", {})
        bad.append((r.get("id"), v, [x.get("code") for x in res.get("reasons", [])], (res.get("message") or r.get("error", ""))[:160]))
print(dict(c))
for b in bad:
    print(*b)
PY
fi
echo "done: $OUT"
