#!/usr/bin/env bash
# `kiln bench` on a GPU (issue 18), one device command of named steps (sessions 9-10):
#   tbg_slow    TritonBench-G --gold, the slowest modules only ($TBG_SLOW: 40-76 s each on an H100 with the
#               legacy scripts and 14 workers; at 100 s, 4 of 14 were unfinished), one wave of check workers,
#               into tbg_gold/ (so none is left unreached)
#   tbg_gold    TritonBench-G --gold over the whole corpus (mode check, with TritonBench's legacy stdout check;
#               resumes what tbg_slow left in tbg_gold/)
#   tbg_alone   TritonBench-G --gold on $TBG_ALONE (default chunk_retention_ops: one of its autotune configs
#               compiles for over 10 minutes, docs/status.md) with a short limit of its own, into tbg_alone/
#   tbt_gold    TritonBench-T --gold over the corpus (mode check, legacy stdout check)
#   kb1_compile KernelBench level 1, the samples of bench/gpu/kb1_samples.jsonl, mode time, with the
#               torch.compile baseline measured (--baseline compile)
#   alone       rotary_emb_nopad and token_attn_reduceV alone: `kiln eval` in a fresh process, and each gold
#               file as a plain `python3 FILE` (outside kiln)
#   test_repeat the same two gold files' own tests twice in a plain process, outside kiln
#               (tritonbench_g_test_repeat.py: same seed, free memory flooded with NaN, then 1500)
#   e2e_gpu     tests/bench/bench_e2e_test.py --gpu (the e2e test's GPU mode)
#   e2e_tbg     the e2e test's TritonBench-G samples (tests/bench_samples/tbg.jsonl) alone, mode time, results kept
#   compile_probe  each autotune config of the G module $PROBE_MODULE (default chunk_retention_ops) compiled
#               alone in a plain process, outside kiln (autotune_compile_probe.py; 12 at a time, each cut at
#               $PROBE_S, default 150 s; $PROBE_TARGET, e.g. cuda:90: compile for it without a GPU)
# Steps named in $BG run in the background (all are waited for before the end). Each step has a limit
# (seconds, env <STEP>_S); a bench step cut there (SIGINT) is reported from what it has (--report-only) and
# resumes in a later command (RESUME_FROM=carried folder of an earlier $OUT/bench2).
# Runs from the repository or from a carried copy D of its bench/, tests/ and worker/ with D/bin/{kiln,
# libcpp-httplib.so.0.11, libbrotli*.so.1} and D/corpus/{tritonbench,kernelbench} (or $KILN_BIN,
# $KILN_CORPUS_DIR); inputs are checked first. Writes $OUT/bench2.tar.gz; the step lines and the non-ok
# samples last.
# Usage: [BG="alone e2e_gpu"] [RESUME_FROM=DIR] bash D/bench/gpu/bench2_gpu.sh STEP...
set -u
r=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${KILN_BIN:-}" ] && [ -x "$r/bin/kiln" ]; then export KILN_BIN=$r/bin/kiln; fi
if [ -z "${KILN_CORPUS_DIR:-}" ] && [ -d "$r/corpus" ]; then export KILN_CORPUS_DIR=$r/corpus; fi
if [ -n "${RESUME_FROM:-}" ]; then RESUME_FROM=$(cd "$RESUME_FROM" && pwd) || exit 2; fi   # before lib.sh's cd
JOB=bench2
source "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH=$(dirname "$KILN_BIN")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TB=$KILN_CORPUS_DIR/tritonbench
for f in "$KILN_BIN" "$KILN_WORKER_DIR/kiln_worker/legacy.py" "$G/add_example.py" "$TB/T" \
         "$KILN_CORPUS_DIR/kernelbench/level1/19_ReLU.py" bench/gpu/kb1_samples.jsonl tests/bench/bench_e2e_test.py \
         tests/bench_samples bench/gpu/bench_nonok.py bench/gpu/tritonbench_g_test_repeat.py \
         bench/gpu/autotune_compile_probe.py "$G/${PROBE_MODULE:-chunk_retention_ops}.py"; do
  [ -e "$f" ] || { echo "missing input: $f"; exit 2; }
done
"$KILN_BIN" bench --help | grep -q -- --baseline-file || { echo "$KILN_BIN has no bench --baseline-file"; exit 2; }
if [ -n "${RESUME_FROM:-}" ]; then   # (its summary is kept as summary_earlier.txt)
  cp -r "$RESUME_FROM"/. "$w"/ && { [ ! -f "$w/summary.txt" ] || mv "$w/summary.txt" "$w/summary_earlier.txt"; }
fi
touch "$w/summary.txt"
# the slowest gold modules (bench/results/bench2_h100: elapsed with the legacy scripts, 6 workers sharing an H100)
TBG_SLOW=${TBG_SLOW:-int8_matmul_quantization matrix_vector_multip attention_fwd_triton1 bmm_optimized chunk_delta_fwd
  chunk_retention chunk_retention_ops layer_norm_fwd masked_select layer_norm_ops reversed_cumsum matmul_dequantize_int4
  bmm_chunk_fwd quantize_copy_kv}
tasks() { local t; for t in "$@"; do printf -- '--task %s ' "$t"; done; }
tbg=(tritonbench-g --gold --dataset "$TB" --mode check --timeout "${TBG_TIMEOUT:-240}")
tbt=(tritonbench-t --gold --dataset "$TB" --mode check --timeout "${TBT_TIMEOUT:-120}")

# alone M: kiln's check of gold module M in a fresh process, then the gold file as a plain script
alone() {
  local m rc v
  for m in rotary_emb_nopad token_attn_reduceV; do
    timeout 150 "$KILN_BIN" eval --task "$G/$m.py" --mode check --timeout 120 --no-db --json > "$w/alone_$m.json" \
      2> "$w/alone_$m.err"
    rc=$?
    v=$("$KILN_PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1])); rs = r.get("reasons") or [{}]
print(r.get("verdict"), (rs[0].get("message") or "")[:120])' "$w/alone_$m.json" 2>&1 | tail -1)
    (cd "$(mktemp -d)" && timeout 150 "$KILN_PYTHON" "$G/$m.py") > "$w/alone_$m.script.txt" 2>&1
    echo "alone $m: kiln eval rc=$rc verdict $v; python3 $m.py rc=$? ($(tail -1 "$w/alone_$m.script.txt" | cut -c1-120))" \
      | tee -a "$w/summary.txt"
  done
}

step() {
  case $1 in
    tbg_slow) BENCH_OUT=tbg_gold bench_step tbg_slow "${TBG_SLOW_S:-130}" "${tbg[@]}" --check-workers "${CW_SLOW:-14}" \
                $(tasks $TBG_SLOW) ;;
    tbg_gold) bench_step tbg_gold "${TBG_S:-180}" "${tbg[@]}" --check-workers "${CW:-12}" $(tasks ${TBG_TASKS:-}) ;;
    tbg_alone) bench_step tbg_alone "${TBG_ALONE_S:-75}" tritonbench-g --gold --dataset "$TB" --mode check \
                 --timeout "${TBG_ALONE_TIMEOUT:-50}" --check-workers 1 $(tasks ${TBG_ALONE:-chunk_retention_ops}) ;;
    tbt_gold) bench_step tbt_gold "${TBT_S:-150}" "${tbt[@]}" --check-workers "${CW_T:-8}" $(tasks ${TBT_TASKS:-}) ;;
    kb1_compile) bench_step kb1_compile "${KB1_S:-150}" kernelbench --level 1 --samples bench/gpu/kb1_samples.jsonl \
                   --dataset "$KILN_CORPUS_DIR/kernelbench" --size dim=16384 --check-workers 2 --baseline compile \
                   --label kiln-written-samples ;;
    alone) alone ;;
    test_repeat) for m in rotary_emb_nopad token_attn_reduceV; do
                   timeout 90 "$KILN_PYTHON" bench/gpu/tritonbench_g_test_repeat.py "$m" 2>&1 | tail -1 | cut -c1-400 \
                     | sed 's/^/test_repeat (outside kiln) /' | tee -a "$w/summary.txt"
                 done ;;
    e2e_tbg) bench_step e2e_tbg "${E2E_TBG_S:-90}" tritonbench-g --samples tests/bench_samples/tbg.jsonl --dataset "$TB" \
               --trials 1 ;;
    e2e_gpu) local t=$SECONDS
             timeout "${E2E_S:-300}" "$KILN_PYTHON" tests/bench/bench_e2e_test.py "$KILN_BIN" --gpu > "$w/e2e_gpu.log" 2>&1
             echo "e2e_gpu rc=$? wall $((SECONDS - t)) s: $(tail -1 "$w/e2e_gpu.log")" | tee -a "$w/summary.txt"
             grep "FAIL\|^lane " "$w/e2e_gpu.log" | cut -c1-300 | tee -a "$w/summary.txt" ;;
    compile_probe) local t=$SECONDS m=${PROBE_MODULE:-chunk_retention_ops}
             timeout "$((${PROBE_S:-150} + 90))" "$KILN_PYTHON" bench/gpu/autotune_compile_probe.py "$G/$m.py" \
               --limit "${PROBE_S:-150}" --jobs 12 ${PROBE_TARGET:+--target "$PROBE_TARGET"} --json "$w/compile_probe_$m.json" > "$w/compile_probe_$m.log" 2>&1
             echo "compile_probe $m rc=$? wall $((SECONDS - t)) s (outside kiln):" | tee -a "$w/summary.txt"
             sed -n '/^| kernel/,$p' "$w/compile_probe_$m.log" | tee -a "$w/summary.txt" ;;
    *) echo "unknown step $1" | tee -a "$w/summary.txt" ;;
  esac
}
for s in "$@"; do
  if [[ " ${BG:-} " == *" $s "* ]]; then step "$s" & else step "$s"; fi
done
wait
for f in tbg_gold tbg_alone tbt_gold e2e_tbg; do
  [ -f "$w/$f/results.jsonl" ] && "$KILN_PYTHON" bench/gpu/bench_nonok.py "$w/$f/results.jsonl" >> "$w/summary.txt" 2>&1
done
finish
