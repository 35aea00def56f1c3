#!/usr/bin/env bash
# Issue 14 (session 8, verdict2) on the GPU: a check batch mixing real-size KernelBench level-1 tasks (12 GiB
# footprints) with small ones (memory admission, 0 false out-of-memory), then kiln profile --task on a
# TritonBench-G module (its own kernels only, the others skipped). INTERP=1: a CPU dry run at small sizes.
# Runs from a carried tree (.device-carry/NAME: bin/kiln + libs, worker/, tests/candidates, bench/verdicts, corpus/).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/bin KILN_WORKER_DIR=$here/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
export KILN_CORPUS_DIR=$here/corpus
OUT=${OUT:-/tmp/kiln-out}; w=$OUT/v2; mkdir -p "$w"
interp=(); [ -n "${INTERP:-}" ] && interp=(--interpret)
nvidia-smi --query-gpu=name,memory.total --format=csv > "$w/nvidia_smi.csv" 2>&1 || true
"$KILN_PYTHON" - "$here" "${INTERP:-}" > "$w/pairs.jsonl" <<'PY'
import json, sys
here, small = sys.argv[1], bool(sys.argv[2])
C, L1 = f"{here}/tests/candidates", f"{here}/corpus/kernelbench/level1"
SMALL = {"19_ReLU": {"batch_size": 4, "dim": 512}, "24_LogSoftmax": {"batch_size": 4, "dim": 5000},
         "1_Square_matrix_multiplication_": {"N": 64}}
big = [("19_ReLU", "honest/relu_ok.py"), ("19_ReLU", "adversarial/relu_mul_mask.py"),
       ("24_LogSoftmax", f"{here}/bench/verdicts/logsoftmax_ok.py"), ("19_ReLU", "adversarial/numpy_host_relu.py"),
       ("1_Square_matrix_multiplication_", "honest/matmul_ok.py")]
smalls = [("relu", "honest/relu_ok.py"), ("relu", "honest/relu_views_ok.py"), ("relu", "adversarial/relu_mul_mask.py"),
          ("softmax", "adversarial/softmax_decomposed.py"), ("matmul", "honest/matmul_ok.py"),
          ("relu", "adversarial/cached_values.py")]
for t, c in big:
    p = {"id": f"{t}:{c.rsplit('/', 1)[-1]}", "task": f"{L1}/{t}.py", "candidate": c if c.startswith("/") else f"{C}/{c}",
         "trials": 1}
    if small:
        p["sizes"] = SMALL[t]
    print(json.dumps(p))
for t, c in smalls:
    print(json.dumps({"id": f"{t}:{c}", "task": f"{C}/tasks/{t}.py", "candidate": f"{C}/{c}"}))
PY
t0=$SECONDS
timeout "${BATCH_S:-150}" "$here/bin/kiln" eval --batch "$w/pairs.jsonl" --mode check --check-workers 4 --timeout 200 \
  --no-db --out "$w/batch.jsonl" "${interp[@]}" > "$w/batch_stdout.txt" 2> "$w/batch_stderr.txt"
echo "batch rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
"$KILN_PYTHON" - "$w/batch.jsonl" <<'PY' | tee "$w/batch_summary.txt"
import json, sys
for l in open(sys.argv[1]):
    j = json.loads(l); r = j.get("result") or {}; m = r.get("memory") or {}
    codes = [x["code"] for x in r.get("reasons", [])]; warns = [x["code"] for x in r.get("warnings", [])]
    print(f"{j['id']:45s} {j.get('verdict')} {codes} warnings {warns} footprint {m.get('footprint_bytes')} "
          f"peak {m.get('peak_bytes')} ratio {m.get('ratio')} {j.get('error', '')[:200]}")
PY
if [ -z "${INTERP:-}" ]; then
  t0=$SECONDS
  timeout "${PROF_S:-90}" "$here/bin/kiln" profile --task "$here/corpus/tritonbench/G/kernels/add_example.py" --no-device \
    > "$w/profile_add_example.txt" 2>&1
  echo "profile rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
  head -c 3000 "$w/profile_add_example.txt"
fi
tar czf "$OUT/v2.tgz" -C "$OUT" v2
