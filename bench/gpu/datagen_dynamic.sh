#!/usr/bin/env bash
# The dynamic-shape compiler route on a GPU host (issue 19), one command, under 300 s: compose COMPOSE programs
# (seed SEED), capture them with torch.compile(dynamic=True) (`kiln datagen --dynamic-shapes`), convert, verify
# each candidate at SHAPES batch sizes (strict policy), and print a table (per program: grid types, outcome,
# operators; the yield). With STATIC=1 (default) the same programs also go through the static route (the
# default), for the yield next to it. NOT RUN YET: written in session 13 without a GPU; its CPU check below ran.
# Everything comes from D (default .device-carry/datagen5): D/bin/kiln (+ its libraries), D/worker (kiln_worker).
# CPU check (no GPU): RECORD_CPU=1 SMALL=1 records with Inductor's Triton CPU backend instead
# (tests/datagen/record_dynamic_cpu.py: first autotuner config, no launch) and verifies under Triton's interpreter.
# Results: $OUT/table.txt, $OUT/dynamic_gpu.tar.gz (the programs and their dynamic captures, to replay as test
# data: docs/datagen.md, "Dynamic shapes"), the run's logs, rejects and verify results.
set -u -o pipefail
D=${D:-$PWD/.device-carry/datagen5}
OUT=${OUT:-/tmp/kiln-out}
W=${W:-/tmp/datagen_dynamic}
COMPOSE=${COMPOSE:-20}
SEED=${SEED:-13}
SHAPES=${SHAPES:-3}
JOBS=${JOBS:-8}
STATIC=${STATIC:-1}
RECORD_CPU=${RECORD_CPU:-}
SMALL=${SMALL:-}                      # 1: tiny shapes (--compose-small; the CPU check's interpreter)
STAGE_S=${STAGE_S:-120}              # each kiln datagen run's limit (two runs: under 300 s with the start)
export LD_LIBRARY_PATH=$D/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_WORKER_DIR=$D/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
KILN=$D/bin/kiln
HERE=$(cd "$(dirname "$0")" && pwd)
TABLE=$HERE/datagen_dynamic_table.py
RECORDER=$HERE/../../tests/datagen/record_dynamic_cpu.py
for need in "$KILN" "$TABLE" "$D/worker/kiln_worker/inductor_capture.py"; do
  [[ -e $need ]] || { echo "missing: $need"; exit 2; }
done
"$KILN" --version > /dev/null || { echo "kiln does not start"; exit 2; }
"$KILN_PYTHON" -c 'import torch, triton' || { echo "no torch/triton in $KILN_PYTHON"; exit 2; }
rm -rf "$W"
mkdir -p "$W" "$OUT"
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$W/run.log"; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no GPU"; } > "$W/gpu.txt"
"$KILN_PYTHON" -c 'import torch, triton; print(torch.__version__, triton.__version__)' >> "$W/gpu.txt" 2>&1
stamp "gpu: $(tr '\n' ' ' < "$W/gpu.txt")"
interp=()
[[ -n $RECORD_CPU ]] && interp=(--interpret --workers 2)
[[ -n $SMALL ]] && interp+=(--compose-small)
common=(--compose "$COMPOSE" --seed "$SEED" --no-db --shapes "$SHAPES" --timeout 60 --jobs "$JOBS"
  --capture-timeout 60 "${interp[@]}")
# 1. dynamic: capture (or record on the CPU), convert, verify at SHAPES batch sizes, outputs
dyn=$W/dynamic
if [[ -n $RECORD_CPU ]]; then
  "$KILN" datagen --out "$dyn" "${common[@]}" --stop-after programs --quiet > "$W/programs.log" 2>&1
  (cd "$dyn" && timeout "$STAGE_S" "$KILN_PYTHON" "$RECORDER" "$dyn/captures.jsonl" programs/*.py) \
    > "$W/record_cpu.log" 2>&1
  capture=(--captures "$dyn/captures.jsonl")
else
  capture=(--dynamic-shapes)
fi
stamp "dynamic route: $COMPOSE composed programs, $SHAPES shapes"
timeout "$STAGE_S" "$KILN" datagen --out "$dyn" "${common[@]}" "${capture[@]}" > "$W/kiln_dynamic.log" 2>&1
rc=$?
stamp "dynamic route: exit $rc, $(cat "$dyn/sft_messages.jsonl" 2>/dev/null | wc -l) samples"
# 2. static, same programs (the same seed composes the same ones)
static_dir=()
if [[ $STATIC == 1 && -z $RECORD_CPU ]]; then
  timeout "$STAGE_S" "$KILN" datagen --out "$W/static" "${common[@]}" > "$W/kiln_static.log" 2>&1
  stamp "static route: exit $?, $(cat "$W/static/sft_messages.jsonl" 2>/dev/null | wc -l) samples"
  static_dir=("$W/static")
fi
"$KILN_PYTHON" "$TABLE" "$dyn" "${static_dir[@]}" > "$OUT/table.txt"
tar -czf "$OUT/dynamic_gpu.tar.gz" -C "$dyn" programs captures.jsonl 2>/dev/null
cp "$W"/*.log "$W/gpu.txt" "$dyn/rejects.jsonl" "$dyn/verify.jsonl" "$dyn/card.md" "$OUT/" 2>/dev/null
stamp "done"
cat "$OUT/table.txt"
