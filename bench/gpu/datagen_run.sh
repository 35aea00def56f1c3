#!/usr/bin/env bash
# kiln datagen's generation run on a GPU host (issue 19): capture Inductor's output for the carried programs
# (tiny composed ones for the CI test data first, then the corpus's KernelBench level-1/2 modules, then composed
# ones) within a time budget, convert and verify what was captured, write the data set, and re-verify 50 random
# kept samples with a separate `kiln eval` run. Everything comes from .device-carry/datagen (D below):
#   D/bin/kiln (+ its shared libraries), D/worker (kiln_worker), D/programs/{small,composed}/, D/corpus/kernelbench/
# Budget knobs: CAPTURE_S (start no capture after), VERIFY_LIMIT (new candidates verified), REVERIFY_S.
# A run continues an earlier one: D/prior/captures.jsonl (if there) is copied in first, so only programs not
# captured yet (or that ran out of memory beside others) are compiled. Results: $OUT/datagen.tar.gz.
set -u -o pipefail
D=${D:-$PWD/.device-carry/datagen}
OUT=${OUT:-/tmp/kiln-out}
W=${W:-/tmp/datagen}
CAPTURE_S=${CAPTURE_S:-75}
VERIFY_LIMIT=${VERIFY_LIMIT:-100}
REVERIFY_S=${REVERIFY_S:-30}
JOBS=${JOBS:-16}
export LD_LIBRARY_PATH=$D/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_WORKER_DIR=$D/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
KILN=$D/bin/kiln
mkdir -p "$W/run" "$OUT"
[[ -f $D/prior/captures.jsonl ]] && cp "$D/prior/captures.jsonl" "$W/run/captures.jsonl"
log=$W/run.log
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$log"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$W/gpu.txt" 2>&1
python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)' >> "$W/gpu.txt" 2>&1
stamp "gpu: $(tr '\n' ' ' < "$W/gpu.txt")"
from=(--from "$D/programs/small" --from "$D/programs/composed" --from "$D/corpus/kernelbench/level1"
      --from "$D/corpus/kernelbench/level2")
common=(--out "$W/run" "${from[@]}" --allow-benchmark --no-db --check-workers 12 --timeout 60)
stamp "capture (deadline ${CAPTURE_S} s, $JOBS processes)"
"$KILN" datagen "${common[@]}" --stop-after capture --jobs "$JOBS" --capture-deadline "$CAPTURE_S" \
  --capture-timeout 40 > "$W/capture.log" 2>&1
stamp "capture done: $(wc -l < "$W/run/captures.jsonl") captured"
stamp "verify (at most $VERIFY_LIMIT candidates)"
"$KILN" datagen "${common[@]}" --captures "$W/run/captures.jsonl" --stop-after verify --verify-limit "$VERIFY_LIMIT" \
  --quiet > "$W/verify.log" 2>&1
stamp "verify done: $(wc -l < "$W/run/verify.jsonl" 2>/dev/null) results"
"$KILN" datagen "${common[@]}" --captures "$W/run/captures.jsonl" --finish > "$W/finish.log" 2>&1
stamp "outputs: $(wc -l < "$W/run/sft_messages.jsonl") samples"
# 50 random kept samples, re-verified by a separate kiln eval run (other seed, fresh process tree).
python3 - "$W/run/sft_messages.jsonl" "$W/run/verify_pairs.jsonl" "$W/reverify_pairs.jsonl" <<'PY'
import json, random, sys
kept = {json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip()}
pairs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
pairs = [p for p in pairs if p["id"] in kept]
random.Random(19).shuffle(pairs)
with open(sys.argv[3], "w") as f:
    for p in pairs[:50]:
        f.write(json.dumps(p) + "\n")
PY
stamp "re-verify $(wc -l < "$W/reverify_pairs.jsonl") samples (at most ${REVERIFY_S} s)"
timeout "$REVERIFY_S" "$KILN" eval --batch "$W/reverify_pairs.jsonl" --out "$W/reverify.jsonl" --mode check \
  --seed 4242 --no-db --check-workers 12 --timeout 60 --quiet > "$W/reverify.log" 2>&1
stamp "re-verify: $(grep -c '"verdict":"ok"' "$W/reverify.jsonl" 2>/dev/null) ok of $(wc -l < "$W/reverify.jsonl" 2>/dev/null)"
stamp "done"
cp "$W"/*.log "$W"/gpu.txt "$W"/reverify*.jsonl "$W/run/" 2>/dev/null
tar -czf "$OUT/datagen.tar.gz" -C "$W/run" captures.jsonl verify.jsonl verify_pairs.jsonl rejects.jsonl summary.json \
  card.md sft_messages.jsonl run.log capture.log verify.log finish.log reverify.jsonl reverify_pairs.jsonl \
  reverify.log gpu.txt 2>/dev/null
ls -la "$OUT"
cat "$W/run/card.md" | head -40
