#!/bin/sh
# kiln's per-shape autotune output (the benchmark helper and pinned shapes, `_kiln_pinned`) is a module a
# strict `kiln eval` accepts (the reward's policy): on a real TritonBench-G module (add_example, read in
# place) under Triton's interpreter, the verdict is ok; the same output with the pinned shape sent to a
# config that drops elements is a mismatch (the check sees the pinned config run).
# usage: pinned_strict_eval_test.sh KILN KILN_REWRITE_APPLY CORPUS_DIR   (KILN_PYTHON: python with torch+triton)
set -u
kiln=$1
apply=$2
task=$3/tritonbench/G/kernels/add_example.py
py=${KILN_PYTHON:-python3}
"$py" -c 'import torch, triton' 2>/dev/null || { echo "skip: torch/triton not importable with $py"; exit 77; }
[ -f "$task" ] || { echo "skip: no corpus at $3"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-pinned-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$apply" "$task" add_kernel "insert_autotune configs=BLOCK_SIZE:4;BLOCK_SIZE:8 pin_key=n_elements pins=8:rest;16:first;32:rest" \
  > "$tmp/pinned.py" || { echo "FAIL: rendering"; exit 1; }
grep -q '_kiln_pinned(("n_elements",), {(8,): False, (16,): True, (32,): False})' "$tmp/pinned.py" \
  || { echo "FAIL: pins not rendered"; cat "$tmp/pinned.py"; exit 1; }
verdict() {
  KILN_PYTHON=$py "$kiln" eval --task "$task" --candidate "$1" --interpret --no-db --json 2>/dev/null \
    | "$py" -c 'import json, sys; print(json.load(sys.stdin)["verdict"])'
}
v=$(verdict "$tmp/pinned.py")
[ "$v" = ok ] || { echo "FAIL: strict kiln eval of the pinned module: $v"; exit 1; }
# The second config, made wrong (it skips every other element): pinned shapes that run it must fail.
sed 's/mask = offsets < n_elements/mask = (offsets < n_elements) \& ((offsets % 2 == 0) | (BLOCK_SIZE == 4))/' \
  "$tmp/pinned.py" > "$tmp/broken.py"
cmp -s "$tmp/pinned.py" "$tmp/broken.py" && { echo "FAIL: the mask line was not found"; exit 1; }
v=$(verdict "$tmp/broken.py")
[ "$v" = mismatch ] || { echo "FAIL: a pinned shape's wrong config was not seen: $v"; exit 1; }
echo "pinned per-shape autotune under strict kiln eval: ok"
