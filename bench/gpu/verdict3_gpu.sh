#!/usr/bin/env bash
# Issue 14, session 9, one GPU run: (1) `kiln profile --task` on TritonBench-G add_example keeps the module's own
# kernels (3 add_kernel launches); (2) the large-input fingerprint kernel (memory._fingerprint_triton) sees a
# one-element change of a 1 GiB tensor; (3) KernelBench level 1 at real size, the trial's peak GPU memory over
# the task's footprint after the memory restructure: 19_ReLU and 24_LogSoftmax honest (3 trials), the hack
# relu_mul_mask (still torch_compute), 1_Square_matrix_multiplication_ honest. Logs under $OUT/verdict3 (tarred),
# a table last. Usage (carried tree): bash .device-carry/verdict3/bench/gpu/verdict3_gpu.sh
JOB=verdict3
source "$(dirname "$0")/lib.sh"
set -u
ncu=${NCU:-$(command -v ncu || ls -1d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -1)}
task=$KILN_CORPUS_DIR/tritonbench/G/kernels/add_example.py
for f in "$KILN_BIN" "$task" "$ncu" "$KILN_CORPUS_DIR"/kernelbench/level1/{19_ReLU,24_LogSoftmax}.py; do
  [ -e "$f" ] || { echo "missing input: $f"; exit 2; }
done
: > "$w/summary.txt"
row() { printf '%-24s rc=%-3s %4d s  %s\n' "$1" "$2" "$3" "$4" | tee -a "$w/summary.txt"; }

s=$SECONDS
timeout 150 "$KILN_BIN" profile --task "$task" --ncu "$ncu" --no-device --json > "$w/profile_task.json" 2> "$w/profile_task.err"
rc=$?; row profile_task_add_example $rc $((SECONDS - s)) "$("$KILN_PYTHON" -c '
import json, sys
j = json.load(open(sys.argv[1]))
print("kept", [k["name"] for k in j["kernels"]], "skipped", len(j.get("skipped_kernels") or []))' "$w/profile_task.json" 2>&1 | tail -1)"

s=$SECONDS
PYTHONPATH=$KILN_WORKER_DIR timeout 120 "$KILN_PYTHON" - > "$w/fingerprint.txt" 2>&1 <<'PY'
from kiln_worker import platform as plat
plat.select_mode(False)
import time, torch
from kiln_worker import memory
x = torch.randn(1 << 28, device="cuda")
torch.cuda.synchronize(); t = time.perf_counter()
snap = memory.snapshot(([x], {}))
torch.cuda.synchronize(); dt = time.perf_counter() - t
base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats()
same = memory.changed(([x], {}), snap)
extra = torch.cuda.max_memory_allocated() - base
x[12345] += 1.0
print(f"fingerprint of 1 GiB {dt * 1e3:.1f} ms (first, with compile); unchanged {same}; changed "
      f"{memory.changed(([x], {}), snap)}; temporaries {extra} bytes")
PY
row fingerprint_1GiB $? $((SECONDS - s)) "$(tail -1 "$w/fingerprint.txt" | cut -c1-150)"

s=$SECONDS
KB_ONLY=19_ReLU:relu_ok.py,24_LogSoftmax:logsoftmax_ok.py,19_ReLU:relu_mul_mask.py,1_Square_matrix_multiplication_:matmul_ok.py \
  PHASE=kb KB_S=330 OUT=$w bash "$root/bench/gpu/verdict_checks.sh" kb > "$w/kb.txt" 2>&1
row kb_real_sizes $? $((SECONDS - s)) "$(tail -1 "$w/kb.txt")"
cat "$w/verdicts/verdicts_summary.txt" 2>/dev/null | tee -a "$w/summary.txt"
finish
