#!/usr/bin/env bash
# The GPU-labelled tests (CTest label "gpu", skipped on machines without a GPU) run on a GPU host against the
# carried binary (.device-carry/bin/kiln) and corpus: every committed candidate's verdict on the compiled path
# (strict and faulty suites), the KernelBench example, a handful of TritonBench-G modules timed against
# themselves, and `kiln profile` end to end with ncu. One line per test with its exit code and seconds.
# Usage: bench/gpu/gpu_tests.sh [TEST...]  (names: strict faulty example tbg_time profile; default all)
source "$(dirname "$0")/lib.sh"
export KILN_PYTHON=${KILN_PYTHON:-python3}
declare -A cmd=(
  [strict]="python3 tests/eval/check_candidates.py $KILN_BIN --gpu --suite adversarial --suite honest"
  [faulty]="python3 tests/eval/check_candidates.py $KILN_BIN --gpu --suite faulty --policy trusted"
  [example]="sh tests/eval/worker_test.sh $KILN_BIN --gpu"
  [tbg_time]="sh tests/eval/tritonbench_g_time_gpu.sh $KILN_BIN"
  [profile]="bash tests/profile/gpu_e2e.sh $KILN_BIN"
)
tests=("$@"); [ ${#tests[@]} -eq 0 ] && tests=(strict faulty example tbg_time profile)
: > "$w/summary.txt"
for t in "${tests[@]}"; do
  s=$SECONDS
  timeout ${TEST_S:-300} ${cmd[$t]} > "$w/$t.log" 2>&1
  rc=$?
  printf '%-10s rc=%-3s %4d s  %s\n' "$t" "$rc" $((SECONDS - s)) "$(tail -1 "$w/$t.log" | cut -c1-120)" | tee -a "$w/summary.txt"
done
finish
