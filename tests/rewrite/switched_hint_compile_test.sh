#!/bin/sh
# The streaming-load hint switched per config (eviction_hints switch=..., what kiln's per-shape autotune
# writes when the finalist and the original differ in the hint) compiles for sm_90 on the CPU: with the
# switch at 1 every rewritten load carries evict_first, at 0 (the default, the original's configs) none.
# usage: switched_hint_compile_test.sh KILN_REWRITE_APPLY TESTS_REWRITE_DIR   (KILN_PYTHON: python with triton)
set -u
apply=$1
dir=$2
py=${KILN_PYTHON:-python3}
"$py" -c 'import triton' 2>/dev/null || { echo "skip: triton not importable with $py"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-switch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$apply" "$dir/cases/vector_add.py" add_kernel \
  "eviction_hints switch=KILN_EVICT_FIRST" "insert_autotune key=n_elements configs=BLOCK_SIZE:256,KILN_EVICT_FIRST:1;BLOCK_SIZE:1024,KILN_EVICT_FIRST:0" \
  > "$tmp/switched.py" || { echo "FAIL: rendering"; exit 1; }
sig='x_ptr=*fp32,y_ptr=*fp32,output_ptr=*fp32,n_elements=i32'
"$py" "$dir/compile_check.py" "$tmp/switched.py" add_kernel --sig "$sig" --const BLOCK_SIZE=256,KILN_EVICT_FIRST=1 \
  --expect 'evictionPolicy = evict_first' || exit 1
"$py" "$dir/compile_check.py" "$tmp/switched.py" add_kernel --sig "$sig" --const BLOCK_SIZE=1024,KILN_EVICT_FIRST=0 \
  --expect 'tt.load' --absent 'evictionPolicy' || exit 1
# The check itself: the unswitched original has no hint, so expecting one fails.
if "$py" "$dir/compile_check.py" "$dir/cases/vector_add.py" add_kernel --sig "$sig" --const BLOCK_SIZE=1024 \
  --expect 'evictionPolicy = evict_first' > /dev/null; then
  echo "FAIL: compile_check.py found a hint the original does not have"; exit 1
fi
echo "ok: the switched hint compiles for sm_90 and follows the switch"
