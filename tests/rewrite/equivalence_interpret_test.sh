#!/bin/sh
# bench/gpu/rewrite_equivalence.py --interpret end to end on a real corpus module (TritonBench-G
# add_example, read in place) under Triton's interpreter. A stand-in for kiln_rewrite_apply writes two
# variants: one that keeps results (BLOCK_SIZE 4 -> 8, the grid follows it) and one that drops the last
# element from the mask. The check must call the first `equal` and the second `mismatch`, and exit 1.
# usage: equivalence_interpret_test.sh SOURCE_DIR CORPUS_DIR   (KILN_PYTHON: python with torch+triton)
set -u
src=$1
corpus=$2/tritonbench/G/kernels
py=${KILN_PYTHON:-python3}
"$py" -c 'import torch, triton' 2>/dev/null || { echo "skip: torch/triton not importable with $py"; exit 77; }
[ -f "$corpus/add_example.py" ] || { echo "skip: no corpus at $corpus"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-eqi-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus"
cp "$corpus/add_example.py" "$tmp/corpus/"
cat > "$tmp/fake_sweep" <<'PY'
#!/usr/bin/env python3
import os, sys
assert sys.argv[1] == "--sweep", sys.argv
src, outdir = sys.argv[2], sys.argv[3]
text = open(src).read()
stem = os.path.basename(src)[:-3]
variants = {
    "set_params": ("BLOCK_SIZE = 4", "BLOCK_SIZE = 8", "set_params BLOCK_SIZE=8"),
    "broken_mask": ("mask = offsets < n_elements", "mask = offsets < n_elements - 1", "set_params BLOCK_SIZE=4"),
}
for name, (old, new, request) in variants.items():
    assert old in text, old
    path = os.path.join(outdir, f"{stem}__add_kernel__{name}.py")
    open(path, "w").write(text.replace(old, new))
    print("file " + path)
    print(f"ok   add_kernel {request}: ")
PY
chmod +x "$tmp/fake_sweep"
"$py" "$src/bench/gpu/rewrite_equivalence.py" --tool "$tmp/fake_sweep" --corpus "$tmp/corpus" --set corpus \
  --interpret --timeout 200 --jobs 2 --json "$tmp/out.json" > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
fail=0
grep -q '^equal  *add_example__add_kernel__set_params ' "$tmp/log" || { echo "FAIL: the faithful variant is not equal"; fail=1; }
grep -q '^mismatch  *add_example__add_kernel__broken_mask ' "$tmp/log" || { echo "FAIL: the broken variant is not a mismatch"; fail=1; }
[ $rc -eq 1 ] || { echo "FAIL: exit $rc, want 1 (a mismatch)"; fail=1; }
[ $fail -eq 0 ] && echo "equivalence_interpret: ok"
exit $fail
