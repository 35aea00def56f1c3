#!/usr/bin/env bash
# The optimize suite on the named kernels (BUDGET s each, default 55; three largest
# perf-harness sizes). Usage: bench/gpu/optimize_suite.sh KERNEL...
# Results under $OUT/optimize_suite, tarred to $OUT/optimize_suite.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
KILN_SUITE_DIR=/tmp/suite_j OUT=$w/suite BUDGET=${BUDGET:-55} GRACE=40 timeout ${SUITE_S:-565} \
  bash bench/optimize_suite/run.sh only "$@" > "$w/suite.log" 2>&1
KILN_SUITE_DIR=/tmp/suite_j OUT=$w/suite bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1
finish
