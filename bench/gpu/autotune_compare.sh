#!/usr/bin/env bash
# kiln's search against an exhaustive search of the same grid (bench/optimize_suite/grids),
# with the side-by-side step. Usage: bench/gpu/autotune_compare.sh KERNEL...
# Results under $OUT/autotune_compare, tarred to $OUT/autotune_compare.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
KILN_SUITE_DIR=/tmp/suite_jat OUT=$w/autotune BUDGET=${BUDGET:-45} EX_BUDGET=${EX_BUDGET:-170} timeout ${AT_S:-565} \
  bash bench/optimize_suite/run.sh autotune "$@" > "$w/autotune.log" 2>&1
KILN_SUITE_DIR=/tmp/suite_jat OUT=$w/autotune bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1
finish
