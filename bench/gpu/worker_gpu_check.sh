#!/usr/bin/env bash
# GPU self-check of the kiln worker's compiled path (run on a GPU host from the repository root):
#   OUT=/some/dir bash bench/gpu/worker_gpu_check.sh            # self-check, ~5-8 minutes
#   OUT=/some/dir bash bench/gpu/worker_gpu_check.sh --sweep    # then all 123 TritonBench-G modules (long)
# Writes $OUT/worker_transcripts.jsonl ({"request","response"} lines for ReplayRunner tests),
# $OUT/worker_gpu_check.txt (PASS/FAIL lines) and, with --sweep, $OUT/tritonbench_g.jsonl.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export OUT=${OUT:-$root/build/gpu-check}
mkdir -p "$OUT"
py=${KILN_PYTHON:-}
if [[ -z "$py" ]]; then
  if [[ -x "$root/.venv/bin/python3" ]]; then py="$root/.venv/bin/python3"; else py=python3; fi
fi
export KILN_PYTHON=$py
export KILN_CORPUS_DIR=${KILN_CORPUS_DIR:-$root/../shared/corpus}
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/nvidia_smi.csv" 2>&1 || true
"$py" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "cuda", torch.cuda.is_available())' | tee "$OUT/versions.txt"
rc=0
quick=()
[[ " $* " == *" --quick "* ]] && quick=(--quick)
"$py" bench/gpu/worker_gpu_check.py --out "$OUT" "${quick[@]}" 2>"$OUT/worker_gpu_check.stderr" || rc=$?
if [[ " $* " == *" --sweep "* ]]; then
  "$py" bench/gpu/eval_tritonbench_g.py --timeout 120 --out "$OUT/tritonbench_g.jsonl" \
    2>"$OUT/tritonbench_g.stderr" | tee "$OUT/tritonbench_g.log" | tail -3
fi
exit $rc
