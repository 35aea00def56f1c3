#!/usr/bin/env bash
# kiln datagen's generation run on a GPU host (issue 19), one command: compose COMPOSE programs (seed SEED) and
# capture Inductor's output for them and the corpus's KernelBench level-1/2 modules in one capture stage (JOBS
# processes sharing the GPU's memory as a budget: a program starts when its estimated memory fits beside those
# running), convert, verify EVERY candidate (VERIFY_LIMIT=-1; corpus ones first), write the data set, and re-verify
# 50 random kept samples with a separate `kiln eval` run (another seed). KernelBench inputs are drawn on the GPU
# (KILN_INPUTS_ON_DEVICE=1). Every step has a time limit so the whole stays inside one device command.
# Everything comes from D (default .device-carry/datagen3):
#   D/bin/kiln (+ libcpp-httplib, libbrotli*), D/worker (kiln_worker), D/corpus/kernelbench/level{1,2}
# On a machine without a GPU it still runs (captures are no_gpu rejects): the smoke test of the script.
# COMPOSE=0: the corpus alone. CAPTURE_TIMEOUT: seconds per program.
# Results: $OUT/datagen.tar.gz (logs, card, summary, rejects, verify results, timings, the capture records
# without their code), $OUT/captures.jsonl.gz (the records with their code) and $OUT/table.txt.
set -u -o pipefail
D=${D:-$PWD/.device-carry/datagen3}
OUT=${OUT:-/tmp/kiln-out}
W=${W:-/tmp/datagen}
COMPOSE=${COMPOSE:-500}
SEED=${SEED:-10}
JOBS=${JOBS:-16}
CAPTURE_S=${CAPTURE_S:-100}          # start no capture after
CAPTURE_TIMEOUT=${CAPTURE_TIMEOUT:-30}
VERIFY_LIMIT=${VERIFY_LIMIT:-}       # empty: every candidate
VERIFY_S=${VERIFY_S:-150}
REVERIFY_S=${REVERIFY_S:-35}
CHECK_WORKERS=${CHECK_WORKERS:-16}
export LD_LIBRARY_PATH=$D/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_WORKER_DIR=$D/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1 KILN_INPUTS_ON_DEVICE=1
KILN=$D/bin/kiln
for need in "$KILN" "$D/worker/kiln_worker/inductor_capture.py" "$D/corpus/kernelbench/level1" \
  "$D/corpus/kernelbench/level2"; do
  [[ -e $need ]] || { echo "missing: $need"; exit 2; }
done
"$KILN" --version > /dev/null || { echo "kiln does not start"; exit 2; }
rm -rf "$W"
mkdir -p "$W/run" "$OUT"
log=$W/run.log
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$log"; }
lines() { if [[ -f $1 ]]; then wc -l < "$1"; else echo 0; fi; }
# a stage that failed (not one stopped by its time limit) shows its log
failed() { local rc=$1 log=$2; [[ $rc -eq 0 || $rc -eq 124 ]] || { stamp "exit $rc: $log"; tail -5 "$log"; }; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$W/gpu.txt" 2>&1
python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)' >> "$W/gpu.txt" 2>&1
stamp "gpu: $(tr '\n' ' ' < "$W/gpu.txt")"
corpus=(--from "$D/corpus/kernelbench/level1" --from "$D/corpus/kernelbench/level2")
compose=()
[[ $COMPOSE -gt 0 ]] && compose=(--compose "$COMPOSE" --seed "$SEED")
common=(--out "$W/run" "${corpus[@]}" "${compose[@]}" --allow-benchmark --no-db --check-workers "$CHECK_WORKERS"
  --timeout 60)
# 1. capture: the corpus's KernelBench level 1 and 2 and the composed programs, one list (corpus first)
stamp "capture: KernelBench level 1/2 + $COMPOSE composed ($JOBS processes, deadline ${CAPTURE_S} s)"
timeout $((CAPTURE_S + CAPTURE_TIMEOUT)) "$KILN" datagen "${common[@]}" --stop-after capture --jobs "$JOBS" \
  --capture-deadline "$CAPTURE_S" --capture-timeout "$CAPTURE_TIMEOUT" > "$W/kiln_capture.log" 2>&1
failed $? "$W/kiln_capture.log"
cp "$W/run/capture.log" "$W/worker_capture.log" 2>/dev/null
t_cap=$SECONDS
stamp "captured: $(lines "$W/run/captures.jsonl") records"
# 2. convert and verify (corpus candidates come first in the pair list: --from before --compose)
stamp "verify (limit ${VERIFY_LIMIT:-none}, at most ${VERIFY_S} s)"
limit=()
[[ -n $VERIFY_LIMIT ]] && limit=(--verify-limit "$VERIFY_LIMIT")
timeout "$VERIFY_S" "$KILN" datagen "${common[@]}" --captures "$W/run/captures.jsonl" --stop-after verify \
  "${limit[@]}" --quiet > "$W/kiln_verify.log" 2>&1
failed $? "$W/kiln_verify.log"
t_ver=$SECONDS
stamp "verify done: $(lines "$W/run/verify.jsonl") results of $(lines "$W/run/verify_pairs.jsonl") candidates"
"$KILN" datagen "${common[@]}" --captures "$W/run/captures.jsonl" --finish > "$W/kiln_finish.log" 2>&1
failed $? "$W/kiln_finish.log"
stamp "outputs: $(lines "$W/run/sft_messages.jsonl") samples"
# 3. 50 random kept samples, re-verified by a separate kiln eval run (other seed, fresh process tree)
python3 - "$W/run/sft_messages.jsonl" "$W/run/verify_pairs.jsonl" "$W/reverify_pairs.jsonl" <<'PY'
import json, random, sys
kept = {json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip()}
pairs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()] if kept else []
pairs = [p for p in pairs if p["id"] in kept]
random.Random(19).shuffle(pairs)
with open(sys.argv[3], "w") as f:
    for p in pairs[:50]:
        f.write(json.dumps(p) + "\n")
PY
stamp "re-verify $(lines "$W/reverify_pairs.jsonl") samples (at most ${REVERIFY_S} s)"
t_rv0=$SECONDS
if [[ -s $W/reverify_pairs.jsonl ]]; then
  timeout "$REVERIFY_S" "$KILN" eval --batch "$W/reverify_pairs.jsonl" --out "$W/reverify.jsonl" --mode check \
    --seed 4242 --no-db --check-workers "$CHECK_WORKERS" --timeout 60 --quiet > "$W/kiln_reverify.log" 2>&1
fi
t_rv=$SECONDS
stamp "re-verify: $(grep -c '"verdict":"ok"' "$W/reverify.jsonl" 2>/dev/null || echo 0) ok of $(lines "$W/reverify.jsonl")"
# timings per stage, the data set's size
{
  echo "capture_s $((t_cap - t0))"
  echo "verify_s $((t_ver - t_cap))"
  echo "reverify_s $((t_rv - t_rv0))"
  du -b "$W/run/sft_messages.jsonl" "$W/run/sft_alpaca.jsonl" "$W/run/sft_sharegpt.jsonl" 2>/dev/null
  du -sb "$W/run/candidates" 2>/dev/null
} > "$W/timings.txt"
grep -h '^{"ok"' "$W"/worker_capture*.log >> "$W/timings.txt" 2>/dev/null
python3 - "$W/run/captures.jsonl" "$W/captures_slim.jsonl" >> "$W/timings.txt" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keep = ("id", "ok", "stage", "seconds", "out_of_memory", "retried_alone", "retry_skipped", "matches_eager",
        "estimate_bytes", "gpu_peak_bytes")
with open(sys.argv[2], "w") as f:
    for r in recs:
        s = {k: r[k] for k in keep if k in r}
        s["error"] = r.get("error", "")[:300]
        f.write(json.dumps(s) + "\n")
comp = [r for r in recs if r["id"].startswith("comp_")]
kb = [r for r in recs if not r["id"].startswith("comp_")]
for name, rs in (("composed", comp), ("corpus", kb)):
    secs = sorted(r.get("seconds", 0) for r in rs)
    print(f"capture_{name}: records {len(rs)} ok {sum(r['ok'] for r in rs)} oom {sum(bool(r.get('out_of_memory')) for r in rs)}"
          f" retried_alone {sum(bool(r.get('retried_alone')) for r in rs)}"
          f" median_s {secs[len(secs) // 2] if secs else 0} sum_s {round(sum(secs), 1)}")
    est = [(r["gpu_peak_bytes"] / r["estimate_bytes"], r["id"]) for r in rs
           if r.get("estimate_bytes") and r.get("gpu_peak_bytes")]
    if est:
        est.sort()
        print(f"peak_over_estimate_{name}: min {est[0][0]:.2f} median {est[len(est) // 2][0]:.2f}"
              f" max {est[-1][0]:.2f} ({est[-1][1]}); over 1: {sum(e > 1 for e, _ in est)}")
PY
stamp "done"
cp "$W"/*.log "$W"/gpu.txt "$W"/timings.txt "$W"/reverify*.jsonl "$W"/captures_slim.jsonl "$W/run/" 2>/dev/null
tar -czf "$OUT/datagen.tar.gz" -C "$W/run" verify.jsonl verify_pairs.jsonl rejects.jsonl summary.json card.md run.log \
  kiln_capture.log worker_capture.log kiln_verify.log \
  kiln_finish.log kiln_reverify.log reverify.jsonl reverify_pairs.jsonl gpu.txt timings.txt captures_slim.jsonl \
  2>/dev/null
# the capture records themselves (a later run verifies from them: --captures), when they fit what comes back
gzip -c "$W/run/captures.jsonl" > "$W/captures.jsonl.gz" 2>/dev/null
[[ $(stat -c %s "$W/captures.jsonl.gz" 2>/dev/null || echo 0) -lt 15000000 ]] && cp "$W/captures.jsonl.gz" "$OUT/"
{ cat "$W/timings.txt"; sed -n '/## Yield per stage/,/## Operator families/p' "$W/run/card.md"; } > "$OUT/table.txt"
cat "$OUT/table.txt"
