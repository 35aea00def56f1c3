#!/usr/bin/env bash
# The compiled-path rewrite check over every variant of the corpus (JOBS workers, default
# 12; SKIP_DONE=LOG skips variants an earlier log has a verdict for). Usage: bench/gpu/rewrite_check.sh
# Results under $OUT/rewrite_check, tarred to $OUT/rewrite_check.tar.gz; the summary prints last.
source "$(dirname "$0")/lib.sh"
EVERY=1 REQ_S=${REQ_S:-560} rewrites ${JOBS:-12}
echo "rewrite_equivalence rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
{ grep -E "^(mismatch|variant_error|original_error) " "$w/rewrite_equivalence.log" | cut -c1-240
  grep -E "^[0-9]+ variants|^summary" "$w/rewrite_equivalence.log"; } > "$w/summary.txt"
finish
