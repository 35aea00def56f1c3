#!/usr/bin/env bash
# `kiln bench` on a GPU, session 9 (issue 18 leftovers), one device command of named steps:
#   tbg_gold    TritonBench-G --gold over the whole corpus (mode check, with TritonBench's legacy stdout check)
#   kb1_compile KernelBench level 1, the samples of bench/gpu/kb1_samples.jsonl, mode time, with the
#               torch.compile baseline measured (--baseline compile)
#   e2e_gpu     tests/bench/bench_e2e_test.py --gpu (the e2e test's GPU mode)
# Each step has a limit (seconds, env <STEP>_S); a step cut there (SIGINT) is reported from what it has
# (--report-only) and resumes in a later command (RESUME_FROM=carried folder of an earlier $OUT/bench2).
# Runs from a carried folder D (ignored by git), checked first:
#   D/bin/{kiln, libcpp-httplib.so.0.11, libbrotli*.so.1}  D/worker/  D/corpus/{tritonbench,kernelbench}
#   D/kb1_samples.jsonl  D/bench2_gpu.sh  D/tests/{bench,bench_samples}
# Usage: [RESUME_FROM=DIR] bash D/bench2_gpu.sh STEP...   (writes $OUT/bench2.tar.gz; the step lines last)
set -u
d=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$d/bin KILN_WORKER_DIR=$d/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
export KILN_CORPUS_DIR=$d/corpus
k=$d/bin/kiln
o=${OUT:-/tmp/kiln-out}/bench2
mkdir -p "$o"
for f in "$k" "$d/worker/kiln_worker/legacy.py" "$d/corpus/tritonbench/G/kernels/add_example.py" \
         "$d/corpus/kernelbench/level1/19_ReLU.py" "$d/kb1_samples.jsonl" "$d/tests/bench/bench_e2e_test.py"; do
  [ -e "$f" ] || { echo "missing input: $f"; exit 2; }
done
"$k" bench --help | grep -q -- --baseline-file || { echo "the carried kiln has no --baseline-file"; exit 2; }
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$o/nvidia_smi.csv" 2>&1
if [ -n "${RESUME_FROM:-}" ]; then cp -r "$RESUME_FROM"/. "$o"/; fi
touch "$o/steps.txt"
# step NAME LIMIT_S ARGS...: one `kiln bench` with its wall time; cut at LIMIT_S, then reported as it stands.
step() {
  local name=$1 limit=$2 s=$SECONDS rc
  shift 2
  timeout -s INT -k 20 "$limit" "$k" bench "$@" --out "$o/$name" --db "$o/kiln.db" > "$o/$name.txt" 2> "$o/$name.err"
  rc=$?
  if [ ! -f "$o/$name/summary.json" ] || [ $rc -ge 124 ]; then
    "$k" bench "$@" --out "$o/$name" --report-only > "$o/$name.txt" 2>> "$o/$name.err"
  fi
  local n
  n=$(wc -l < "$o/$name/results.jsonl" 2>/dev/null || echo 0)
  echo "$name rc=$rc wall $((SECONDS - s)) s, $n result lines: $(grep -m1 '^| [^-M]' "$o/$name.txt")" | tee -a "$o/steps.txt"
  grep -m1 -i "legacy stdout exec\|torch.compile baseline" "$o/$name.txt" | tee -a "$o/steps.txt"
}
for s in "$@"; do
  case $s in
    tbg_gold) step tbg_gold ${TBG_S:-300} tritonbench-g --gold --dataset "$d/corpus/tritonbench" --mode check \
                --timeout 60 --check-workers ${CW:-4} ;;
    kb1_compile) step kb1_compile ${KB1_S:-150} kernelbench --level 1 --samples "$d/kb1_samples.jsonl" \
                   --dataset "$d/corpus/kernelbench" --size dim=16384 --check-workers 2 --baseline compile \
                   --label kiln-written-samples ;;
    e2e_gpu) t=$SECONDS
             (cd "$d" && timeout ${E2E_S:-200} python3 tests/bench/bench_e2e_test.py "$k" --gpu > "$o/e2e_gpu.log" 2>&1)
             echo "e2e_gpu rc=$? wall $((SECONDS - t)) s: $(tail -1 "$o/e2e_gpu.log")" | tee -a "$o/steps.txt"
             grep FAIL "$o/e2e_gpu.log" | cut -c1-300 ;;
    *) echo "unknown step $s" ;;
  esac
done
tar -czf "$OUT/bench2.tar.gz" --exclude 'kiln.db*' -C "$(dirname "$o")" bench2
cat "$o/steps.txt"
