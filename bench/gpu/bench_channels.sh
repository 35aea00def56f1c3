#!/usr/bin/env bash
# `kiln bench` on a GPU (issue 18, session 8), one device command: KernelBench level 1 over five corpus tasks with
# the samples of bench/gpu/kb1_samples.jsonl (mode time), then --gold of TritonBench-T and TritonBench-G over the
# corpus (mode check: the timed TritonBench-G sweep needs about 40 GPU-minutes, bench/results/tritonbench_g_time.md).
# Each step has a limit; a step cut there (SIGINT) is reported from what it has (--report-only): lib.sh's bench_step.
# Runs from the repository or from a carried copy D laid out as bench/gpu/bench2_carry.sh makes it (D/bin/kiln,
# D/corpus, D/worker, D/bench/gpu).
# Usage: [RESUME_FROM=DIR] bash D/bench/gpu/bench_channels.sh   (writes $OUT/bench.tar.gz; the step lines last)
set -u
r=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${KILN_BIN:-}" ] && [ -x "$r/bin/kiln" ]; then export KILN_BIN=$r/bin/kiln; fi
if [ -z "${KILN_CORPUS_DIR:-}" ] && [ -d "$r/corpus" ]; then export KILN_CORPUS_DIR=$r/corpus; fi
JOB=bench
source "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH=$(dirname "$KILN_BIN")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# RESUME_FROM=DIR (carried): the bench folders of an earlier run; each step then evaluates only the rest.
if [ -n "${RESUME_FROM:-}" ]; then cp -r "$RESUME_FROM"/. "$w"/; fi
: > "$w/summary.txt"
bench_step kb1 "${KB1_S:-55}" kernelbench --level 1 --samples bench/gpu/kb1_samples.jsonl \
  --dataset "$KILN_CORPUS_DIR/kernelbench" --size dim=16384 --check-workers 2 --label kiln-written-samples
bench_step tbt_gold "${TBT_S:-45}" tritonbench-t --gold --dataset "$KILN_CORPUS_DIR/tritonbench" --mode check --timeout 60
bench_step tbg_gold "${TBG_S:-110}" tritonbench-g --gold --dataset "$KILN_CORPUS_DIR/tritonbench" --mode check --timeout 60
finish
