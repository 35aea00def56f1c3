#!/usr/bin/env bash
# kiln datagen's generation run on a GPU host (issue 19), the whole figure in one command: compose COMPOSE
# programs (seed SEED); capture Inductor's output for them and the corpus's KernelBench level-1/2 modules in one
# capture stage (JOBS processes sharing the GPU's memory as a budget); convert; verify EVERY candidate (no limit
# unless VERIFY_LIMIT is set; corpus ones first); write the data set; re-verify 50 random kept samples with a
# separate `kiln eval` run (another seed); print a short table last (yield per stage and source, samples per
# hour, the re-verify). KernelBench inputs are drawn on the GPU (KILN_INPUTS_ON_DEVICE=1).
# Time: the whole run aims to end within TOTAL_S seconds: no capture starts after CAPTURE_S, verification gets
# what is left less REVERIFY_S (the re-verify's own limit) and 10 s; a stage cut by its limit says so in the table,
# and the table counts the programs the capture deadline left unstarted (per source).
# The defaults are what the whole figure needs on an H100 by session 11's run (90 s deadline: 336 of 644 programs
# captured by 91 s after a 22 s start; once the KernelBench modules were done, composed programs finished at
# 8 to 9 a second: the 298 left need about 35 s, so all 644 by about 130 s; CAPTURE_S=170 leaves 40 s of margin
# for starting one. Verification: 259 candidates in 137 s, composed 3.2 s and KernelBench 6.6 s per candidate
# in a worker at 7.7 workers busy: about 560 candidates need about 265 s; the re-verify about 55 s): TOTAL_S=530,
# for a device command of timeout 575 (its start and idle release within a share of 650 s).
# Everything comes from D (default .device-carry/datagen5):
#   D/bin/kiln (+ libcpp-httplib, libbrotli*), D/worker (kiln_worker), D/corpus/kernelbench/level{1,2} and
#   D/corpus/kernelbench/LICENSE (the card's licence of the harvested programs: session 12's carry lacked it)
# CPU checks (no GPU): FROM="dir ..." replaces the corpus folders, CAPTURES=FILE verifies recorded captures
# instead of capturing (COMPOSE=0 then, or the composed programs are not_captured rejects), INTERPRET=1 verifies
# under Triton's interpreter (WORKERS processes). Without a GPU and without CAPTURES, captures are no_gpu rejects.
# Results: $OUT/datagen.tar.gz (logs, card, summary, rejects, verify results, timings, the capture records
# without their code), $OUT/captures.jsonl.gz (the records with their code) and $OUT/table.txt; the data set
# stays in $W/run (default /tmp/datagen/run).
set -u -o pipefail
D=${D:-$PWD/.device-carry/datagen5}
OUT=${OUT:-/tmp/kiln-out}
W=${W:-/tmp/datagen}
COMPOSE=${COMPOSE:-500}
SEED=${SEED:-11}
JOBS=${JOBS:-16}
TOTAL_S=${TOTAL_S:-530}
CAPTURE_S=${CAPTURE_S:-170}          # start no capture after
CAPTURE_TIMEOUT=${CAPTURE_TIMEOUT:-30}
VERIFY_LIMIT=${VERIFY_LIMIT:-}       # empty: every candidate
REVERIFY_S=${REVERIFY_S:-60}
REVERIFY_N=${REVERIFY_N:-50}
CHECK_WORKERS=${CHECK_WORKERS:-16}
WORKERS=${WORKERS:-2}
CAPTURES=${CAPTURES:-}
INTERPRET=${INTERPRET:-}
export LD_LIBRARY_PATH=$D/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_WORKER_DIR=$D/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1 KILN_INPUTS_ON_DEVICE=1
KILN=$D/bin/kiln
HERE=$(cd "$(dirname "$0")" && pwd)
LIB=$HERE/datagen_run_lib.py
read -r -a from_dirs <<< "${FROM:-$D/corpus/kernelbench/level1 $D/corpus/kernelbench/level2}"
licence=()
[[ -z ${FROM:-} ]] && licence=("$D/corpus/kernelbench/LICENSE")
for need in "$KILN" "$LIB" "$D/worker/kiln_worker/inductor_capture.py" "${from_dirs[@]}" "${licence[@]}" \
  ${CAPTURES:+"$CAPTURES"}; do
  [[ -e $need ]] || { echo "missing: $need"; exit 2; }
done
"$KILN" --version > /dev/null || { echo "kiln does not start"; exit 2; }
"$KILN_PYTHON" -c 'import torch, triton' || { echo "no torch/triton in $KILN_PYTHON"; exit 2; }
rm -rf "$W"
mkdir -p "$W/run" "$OUT"
log=$W/run.log
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*" | tee -a "$log"; }
lines() { if [[ -f $1 ]]; then wc -l < "$1"; else echo 0; fi; }
# a stage that failed shows its log; one stopped by its time limit (124) is noted for the table
cut=()
failed() {
  local rc=$1 log=$2 what=$3
  if [[ $rc -eq 124 ]]; then cut+=("$what"); stamp "$what: stopped by its time limit"
  elif [[ $rc -ne 0 ]]; then stamp "$what: exit $rc ($log)"; tail -5 "$log"; fi
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no GPU"; } > "$W/gpu.txt"
"$KILN_PYTHON" -c 'import torch, triton; print(torch.__version__, triton.__version__)' >> "$W/gpu.txt" 2>&1
stamp "gpu: $(tr '\n' ' ' < "$W/gpu.txt")"
corpus=()
for d in "${from_dirs[@]}"; do corpus+=(--from "$d"); done
compose=()
[[ $COMPOSE -gt 0 ]] && compose=(--compose "$COMPOSE" --seed "$SEED")
interp=()
[[ -n $INTERPRET ]] && interp=(--interpret --workers "$WORKERS")
common=(--out "$W/run" "${corpus[@]}" "${compose[@]}" --allow-benchmark --no-db --check-workers "$CHECK_WORKERS"
  --timeout 60 "${interp[@]}")
# 1. capture: the corpus's KernelBench level 1 and 2 and the composed programs, one list (corpus first)
if [[ -z $CAPTURES ]]; then
  CAPTURES=$W/run/captures.jsonl
  stamp "capture: ${from_dirs[*]##*/} + $COMPOSE composed ($JOBS processes, deadline ${CAPTURE_S} s)"
  timeout $((CAPTURE_S + CAPTURE_TIMEOUT + 10)) "$KILN" datagen "${common[@]}" --stop-after capture --jobs "$JOBS" \
    --capture-deadline "$CAPTURE_S" --capture-timeout "$CAPTURE_TIMEOUT" > "$W/kiln_capture.log" 2>&1
  failed $? "$W/kiln_capture.log" capture
  cp "$W/run/capture.log" "$W/worker_capture.log" 2>/dev/null
else
  stamp "capture: recorded, $CAPTURES"
fi
t_cap=$SECONDS
stamp "captured: $(lines "$CAPTURES") records"
# 2. convert and verify every candidate (corpus candidates come first in the pair list: --from before --compose)
verify_s=$((TOTAL_S - (SECONDS - t0) - REVERIFY_S - 10))
[[ $verify_s -lt 30 ]] && verify_s=30
stamp "verify (limit ${VERIFY_LIMIT:-none}, at most ${verify_s} s)"
limit=()
[[ -n $VERIFY_LIMIT ]] && limit=(--verify-limit "$VERIFY_LIMIT")
timeout "$verify_s" "$KILN" datagen "${common[@]}" --captures "$CAPTURES" --stop-after verify "${limit[@]}" \
  --quiet > "$W/kiln_verify.log" 2>&1
failed $? "$W/kiln_verify.log" verify
stamp "verify done: $(lines "$W/run/verify.jsonl") results of $(lines "$W/run/verify_pairs.jsonl") candidates"
"$KILN" datagen "${common[@]}" --captures "$CAPTURES" --finish > "$W/kiln_finish.log" 2>&1
failed $? "$W/kiln_finish.log" finish
t_out=$SECONDS
stamp "outputs: $(lines "$W/run/sft_messages.jsonl") samples"
# 3. REVERIFY_N random kept samples, re-verified by a separate kiln eval run (other seed, fresh process tree)
"$KILN_PYTHON" "$LIB" pick "$W/run" "$REVERIFY_N" "$W/reverify_pairs.jsonl"
stamp "re-verify $(lines "$W/reverify_pairs.jsonl") samples (at most ${REVERIFY_S} s)"
t_rv0=$SECONDS
if [[ -s $W/reverify_pairs.jsonl ]]; then
  timeout "$REVERIFY_S" "$KILN" eval --batch "$W/reverify_pairs.jsonl" --out "$W/reverify.jsonl" --mode check \
    --seed 4242 --no-db --check-workers "$CHECK_WORKERS" --timeout 60 "${interp[@]}" --quiet \
    > "$W/kiln_reverify.log" 2>&1
  failed $? "$W/kiln_reverify.log" re-verify
fi
t_rv=$SECONDS
stamp "done"
{
  echo "capture_s $((t_cap - t0))"
  echo "verify_and_output_s $((t_out - t_cap))"
  echo "reverify_s $((t_rv - t_rv0))"
  echo "cut_by_time_limit ${cut[*]:-none}"
  du -b "$W/run/sft_messages.jsonl" "$W/run/sft_alpaca.jsonl" "$W/run/sft_sharegpt.jsonl" 2>/dev/null
  du -sb "$W/run/candidates" 2>/dev/null
} > "$W/timings.txt"
grep -h '^{"ok"' "$W"/worker_capture*.log >> "$W/timings.txt" 2>/dev/null
[[ -f $W/run/captures.jsonl ]] && "$KILN_PYTHON" "$LIB" slim "$W/run/captures.jsonl" \
  "$W/captures_slim.jsonl" >> "$W/timings.txt"
cp "$W"/*.log "$W"/gpu.txt "$W"/timings.txt "$W"/reverify*.jsonl "$W"/captures_slim.jsonl "$W/run/" 2>/dev/null
tar -czf "$OUT/datagen.tar.gz" -C "$W/run" verify.jsonl verify_pairs.jsonl rejects.jsonl summary.json card.md run.log \
  kiln_capture.log worker_capture.log kiln_verify.log \
  kiln_finish.log kiln_reverify.log reverify.jsonl reverify_pairs.jsonl gpu.txt timings.txt captures_slim.jsonl \
  2>/dev/null
# the capture records themselves (a later run verifies from them: CAPTURES=), when they fit what comes back
if [[ -f $W/run/captures.jsonl ]]; then
  gzip -c "$W/run/captures.jsonl" > "$W/captures.jsonl.gz"
  [[ $(stat -c %s "$W/captures.jsonl.gz") -lt 15000000 ]] && cp "$W/captures.jsonl.gz" "$OUT/"
fi
"$KILN_PYTHON" "$LIB" table "$W/run" "$W/reverify.jsonl" "$W/timings.txt" \
  "$((t_out - t0))" "$W/reverify_pairs.jsonl" > "$OUT/table.txt"
cat "$OUT/table.txt"
