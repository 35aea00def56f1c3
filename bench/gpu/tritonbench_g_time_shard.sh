#!/usr/bin/env bash
# One device command of the TritonBench-G time sweep (issue 16), recorded for CI replay:
#
#   SHARED="a b ..." ALONE="x y ..." bench/gpu/tritonbench_g_time_shard.sh
#
# 1. checks its inputs first (the binary starts, the worker imports torch and triton, every named module
#    and its perf harness exist) and stops before any GPU work if one is missing;
# 2. SHARED: NBATCH (default 3) batches at once, modules dealt round-robin, each a whole-pair batch
#    (`kiln eval --batch --mode time --record`, so no check workers: every pair runs whole) cut at
#    LIMIT_SHARED s (default 270), PER_MODULE_S (default 120) per module;
# 3. ALONE: the named modules in one batch after the shared phase, nothing else on the GPU (whole pairs,
#    no check workers), cut at LIMIT_ALONE s (default 240), PER_MODULE_ALONE_S (default 200) per module;
#    its files are named after ALONE_NAME (default "alone"; another name for each call whose folders
#    tritonbench_g_time_to_replay.py merges, which takes the later folder's file of a name);
# 4. the plain check outside kiln (tritonbench_g_self_repeat.py, GPU only) of every module whose verdict is
#    not ok and not a compile error, SELF_REPEAT_S s in all (default 60);
# 5. prints a short table last and tars everything to $OUT/shard.tar.gz (TAR_ONLY=1: the folder is removed
#    after, for a device call that returns few files).
# GPU_MEMORY_GIB=80 (GPU only): gpu_memory_cap.py holds the rest of a larger GPU during the batches, so an
# H200 shows what an 80 GB H100 would (out-of-memory verdicts); its line goes into checks.txt.
# Resumable: RESUME_DIR=DIR (an earlier call's untarred folder) continues its batches with `--resume`
# (their results and transcripts are copied first; same module lists and NBATCH).
# Layout (a carried copy or a checkout): the binary is $KILN_BIN, else <root>/bin/kiln, else
# build/release/kiln; the worker is <root>/worker; the corpus is $KILN_CORPUS_DIR, else <root>/corpus, else
# ../shared/corpus. Without a GPU the worker runs Triton's interpreter (for testing this script on a CPU).
# Files under $OUT/shard/: result_K.jsonl, transcript_K.jsonl, batch_K.{pairs,stderr,log} (K = 0..NBATCH-1
# shared, $ALONE_NAME), all.jsonl, self_repeat.{jsonl,log}, summary.txt, nvidia_smi.csv, checks.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${KILN_BIN:-}
[ -n "$bin" ] || { [ -x "$root/bin/kiln" ] && bin=$root/bin/kiln; } || bin=$root/build/release/kiln
corpus=${KILN_CORPUS_DIR:-}
[ -n "$corpus" ] || { [ -d "$root/corpus" ] && corpus=$root/corpus; } || corpus=$root/../shared/corpus
export KILN_WORKER_DIR=${KILN_WORKER_DIR:-$root/worker} KILN_PYTHON=${KILN_PYTHON:-python3}
export KILN_CORPUS_DIR=$corpus PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kiln-tbg-out}
w=$OUT/shard
mkdir -p "$w"
G=$corpus/tritonbench/G
nbatch=${NBATCH:-3}
shared=(${SHARED:-})
alone=(${ALONE:-})
t0=$SECONDS

# 1. inputs
gpu=none
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv \
  > "$w/nvidia_smi.csv" 2>&1 && gpu=$(sed -n 2p "$w/nvidia_smi.csv")
{
  fail=0
  "$bin" --version > /dev/null 2>&1 || { echo "missing: $bin does not start"; fail=1; }
  "$KILN_PYTHON" -c 'import torch, triton' 2>/dev/null || { echo "missing: $KILN_PYTHON cannot import torch, triton"; fail=1; }
  [ -f "$KILN_WORKER_DIR/kiln_worker/__init__.py" ] || { echo "missing: worker in $KILN_WORKER_DIR"; fail=1; }
  for k in "${shared[@]}" "${alone[@]}"; do
    [ -f "$G/kernels/$k.py" ] && [ -f "$G/perf/${k}_perf.py" ] || { echo "missing: module $k under $G"; fail=1; }
  done
  [ $((${#shared[@]} + ${#alone[@]})) -gt 0 ] || { echo "missing: no module named (SHARED, ALONE)"; fail=1; }
  echo "gpu: $gpu"
  echo "modules: shared ${#shared[@]} in $nbatch batches, alone ${#alone[@]}"
  exit $fail
} 2>&1 | tee "$w/checks.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "inputs missing: nothing run"; exit 2; }

cap_pid=
if [ -n "${GPU_MEMORY_GIB:-}" ] && [ "$gpu" != none ]; then
  "$KILN_PYTHON" "$here/gpu_memory_cap.py" "$GPU_MEMORY_GIB" > "$w/memory_cap.txt" 2>&1 &
  cap_pid=$!
  for _ in $(seq 60); do grep -q holding "$w/memory_cap.txt" 2>/dev/null && break; kill -0 $cap_pid 2>/dev/null || break; sleep 1; done
  cat "$w/memory_cap.txt" | tee -a "$w/checks.txt"
  trap '[ -n "$cap_pid" ] && kill $cap_pid 2>/dev/null' EXIT
fi

# One whole-pair batch: batch NAME LIMIT PER_MODULE MODULE...
batch() {
  local name=$1 limit=$2 per=$3; shift 3
  local pairs=$w/batch_$name.pairs res=$w/result_$name.jsonl rec=$w/transcript_$name.jsonl resume=()
  for k in "$@"; do
    printf '{"id": "%s", "task": "%s", "candidate": null}\n' "$k" "$G/kernels/$k.py"
  done > "$pairs"
  if [ -n "${RESUME_DIR:-}" ] && [ -s "$RESUME_DIR/result_$name.jsonl" ]; then
    cp "$RESUME_DIR/result_$name.jsonl" "$res"
    [ -f "$RESUME_DIR/transcript_$name.jsonl" ] && cp "$RESUME_DIR/transcript_$name.jsonl" "$rec"
    resume=(--resume)
    # kiln eval --resume with nothing left to evaluate starts no worker; skip it outright
    local done_n
    done_n=$(grep -c '"verdict"' "$res")
    [ "$done_n" -ge "$#" ] && { echo "batch $name: all $# done before"; return 0; }
  fi
  local s=$SECONDS
  timeout "$limit" "$bin" eval --batch "$pairs" --out "$res" --mode time --no-db --timeout "$per" \
    --record "$rec" "${resume[@]}" > /dev/null 2> "$w/batch_$name.stderr"
  echo "batch $name: rc=$? in $((SECONDS - s)) s, $(cat "$res" 2>/dev/null | grep -c '"verdict"') of $# with a verdict"
}

# 2. shared phase
pids=()
for ((k = 0; k < nbatch; k++)); do
  mine=()
  for ((i = k; i < ${#shared[@]}; i += nbatch)); do mine+=("${shared[i]}"); done
  [ ${#mine[@]} -gt 0 ] || continue
  batch "$k" "${LIMIT_SHARED:-270}" "${PER_MODULE_S:-120}" "${mine[@]}" > "$w/batch_$k.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
cat "$w"/batch_*.log 2>/dev/null

# 3. alone phase
an=${ALONE_NAME:-alone}
[ ${#alone[@]} -gt 0 ] && batch "$an" "${LIMIT_ALONE:-240}" "${PER_MODULE_ALONE_S:-200}" "${alone[@]}" | tee "$w/batch_$an.log"

[ -n "$cap_pid" ] && kill $cap_pid 2>/dev/null && wait $cap_pid 2>/dev/null; cap_pid=

# 4. the plain check of the modules that are not ok (GPU only)
python3 - "$w" > "$w/not_ok.txt" <<'EOF'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/result_*.jsonl")):
    for line in open(f):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("verdict") not in ("ok", "compile_error"):
            print(r.get("id"))
EOF
if [ "$gpu" != none ] && [ -s "$w/not_ok.txt" ]; then
  timeout "${SELF_REPEAT_S:-60}" "$KILN_PYTHON" "$here/tritonbench_g_self_repeat.py" --corpus "$corpus" \
    --out "$w/self_repeat.jsonl" $(cat "$w/not_ok.txt") 2>&1 | grep -v '^warmup' | cut -c1-400 > "$w/self_repeat.log"
fi

# 5. summary
cat "$w"/result_*.jsonl > "$w/all.jsonl" 2>/dev/null
python3 "$here/summarize_time_sweep.py" "$w/all.jsonl" > "$w/summary.txt" 2>&1
echo "shard in $((SECONDS - t0)) s on $gpu"
cp "$w/self_repeat.log" "$OUT/" 2>/dev/null
tar -czf "$OUT/shard.tar.gz" -C "$OUT" shard
cp "$w/summary.txt" "$OUT/" 2>/dev/null
[ -n "${TAR_ONLY:-}" ] && rm -rf "$w"   # (a device call returns at most 8 files: the tarball holds them)
[ -f "$OUT/self_repeat.log" ] && cut -c1-200 "$OUT/self_repeat.log"
cat "$OUT/summary.txt"
