#!/usr/bin/env bash
# Issue 14: why `kiln profile --task` profiled no kernel of TritonBench-G add_example on the H100. One run:
# gpu_tests.sh profile (the --script end to end), `kiln profile --task` (own kernels, then --all-kernels, work
# files kept), then ncu by hand on the same worker request (with and without the NVTX range, one cheap metric),
# and the worker alone. Everything under $OUT/profile_task_diag (tarred); a table last.
# Usage (carried tree): bash .device-carry/verdict3/bench/gpu/profile_task_diag.sh
JOB=profile_task_diag
source "$(dirname "$0")/lib.sh"
set -u
ncu=${NCU:-$(command -v ncu || ls -1d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -1)}
task=$KILN_CORPUS_DIR/tritonbench/G/kernels/add_example.py
for f in "$KILN_BIN" "$task" "$ncu"; do [ -e "$f" ] || { echo "missing input: $f"; exit 2; }; done
"$ncu" --version > "$w/ncu_version.txt" 2>&1
: > "$w/summary.txt"
row() { printf '%-28s rc=%-3s %4d s  %s\n' "$1" "$2" "$3" "$4" | tee -a "$w/summary.txt"; }
s=$SECONDS; TEST_S=150 JOB=gpu_tests_profile OUT=$w bash "$root/bench/gpu/gpu_tests.sh" profile > "$w/gpu_tests.txt" 2>&1
row gpu_tests.sh_profile $? $((SECONDS - s)) "$(tail -1 "$w/gpu_tests.txt")"
for variant in own all; do
  extra=(); [ $variant = all ] && extra=(--all-kernels)
  mkdir -p "$w/keep_$variant"; s=$SECONDS
  KILN_KEEP_TMP=1 TMPDIR=$w/keep_$variant timeout 150 "$KILN_BIN" profile --task "$task" --ncu "$ncu" --no-device \
    --json --save-csv "$w/task_$variant.csv" "${extra[@]}" > "$w/task_$variant.json" 2> "$w/task_$variant.err"
  rc=$?; row "profile_task_$variant" $rc $((SECONDS - s)) "$(grep -c '"name"' "$w/task_$variant.json") names; $(tail -1 "$w/task_$variant.err" | cut -c1-100)"
done
req=$(ls -1 "$w"/keep_own/kiln-profile-*/request.json 2>/dev/null | head -1)
if [ -n "$req" ]; then
  export PYTHONPATH=$KILN_WORKER_DIR
  for sel in nvtx plain; do
    nv=(); [ $sel = nvtx ] && nv=(--nvtx --nvtx-include kiln_profile/)
    s=$SECONDS
    timeout 150 "$ncu" --csv --page raw --metrics gpu__time_duration.sum "${nv[@]}" -k regex:. --launch-count 40 \
      --target-processes all "$KILN_PYTHON" -m kiln_worker --request "$req" --out "$w/ncu_$sel.resp.json" \
      > "$w/ncu_$sel.out" 2> "$w/ncu_$sel.err"
    rc=$?; row "ncu_by_hand_$sel" $rc $((SECONDS - s)) "$(grep -c '^"[0-9]' "$w/ncu_$sel.out") rows; $(grep -h '==PROF==\|==WARNING==\|==ERROR==' "$w/ncu_$sel.out" "$w/ncu_$sel.err" | sort | uniq -c | head -3 | tr '\n' ' ' | cut -c1-150)"
  done
  s=$SECONDS; timeout 120 "$KILN_PYTHON" -m kiln_worker --request "$req" --out "$w/worker_alone.json" > "$w/worker_alone.out" 2>&1
  row worker_alone $? $((SECONDS - s)) "$(grep -o 'kiln_profile kernels:.*' "$w/worker_alone.out" | cut -c1-100)"
fi
finish
