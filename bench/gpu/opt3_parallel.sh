#!/usr/bin/env bash
# Issue 21's suite on several GPUs of one host at once: one opt3_generalization.sh per GPU
# (CUDA_VISIBLE_DEVICES=I, its own slices, suite folder ${KILN_SUITE_DIR}_gI, tarball $OUT/<that folder>.tar.gz
# and kiln database), so a device command of N GPUs runs N modules side by side. Each kiln optimize times on its
# own GPU; the host's cores are shared (the suite's workers are mostly GPU-bound). The GPUs' tables come last.
#
#   bash ROOT/bench/gpu/opt3_parallel.sh "dev:0:4" "held:0:4"      one quoted slice list per GPU
# Env: as opt3_generalization.sh (BUDGET, HARD_END, WALL_LIMIT, OPTIMIZE_FLAGS), KILN_SUITE_DIR (default
#      /tmp/opt3_par), OUT, OPT3_SCRIPT (the per-GPU suite, default opt3_generalization.sh beside this one).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: opt3_parallel.sh \"PART:FROM:COUNT ...\" [\"...\" ...]   (one slice list per GPU)" >&2; exit 2; }
[ $# -ge 1 ] || usage
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$gpus" -ge 1 ] || { echo "opt3_parallel: no GPU (nvidia-smi -L lists none)" >&2; exit 2; }
[ $# -le "$gpus" ] || { echo "opt3_parallel: $# slice lists for $gpus GPU(s)" >&2; exit 2; }
base=${KILN_SUITE_DIR:-/tmp/opt3_par}
export OUT=${OUT:-/tmp/opt3_out}
mkdir -p "$OUT"
t0=$SECONDS
pids=()
i=0
for slices in "$@"; do
  [ -n "${slices// /}" ] || usage
  CUDA_VISIBLE_DEVICES=$i KILN_SUITE_DIR=${base}_g$i KILN_DB=${base}_g$i.db \
    bash "${OPT3_SCRIPT:-$here/opt3_generalization.sh}" "$slices" > "${base}_g$i.txt" 2>&1 &
  pids+=($!)
  i=$((i + 1))
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for ((j = 0; j < i; j++)); do
  echo "== GPU $j: $(sed -n "$((j + 1))p" <<< "$(nvidia-smi --query-gpu=name --format=csv,noheader)")"
  cp "${base}_g$j.txt" "$OUT/$(basename "$base")_g$j.txt"
  tail -n 30 "${base}_g$j.txt"
done
echo "opt3_parallel: $i GPU(s), $((SECONDS - t0)) s"
exit $rc
