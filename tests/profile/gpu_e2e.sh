#!/usr/bin/env bash
# End to end: `kiln profile --script` profiles a small kernel through ncu and diagnoses it.
# Exits 77 (skipped) without a GPU or without ncu.
set -u
kiln=$1
py=${KILN_PYTHON:-python3}
dir=$(cd "$(dirname "$0")" && pwd)
"$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null || { echo "no GPU: skip"; exit 77; }
ncu=${KILN_NCU:-$(command -v ncu || ls -1d /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | tail -1)}
[ -n "$ncu" ] && [ -x "$ncu" ] || { echo "no ncu: skip"; exit 77; }
out=$(mktemp -d)
set -x
"$kiln" profile --script "$dir/kernels/vec_add.py" --python "$py" --ncu "$ncu" --no-device \
  --json --html "$out/report.html" --save-csv "$out/vec_add.csv" > "$out/report.json" || exit 1
grep -q '"name": "vec_add_kernel"' "$out/report.json" || { echo "kernel missing from the report"; exit 1; }
grep -q '"class": "memory_bound"\|"class": "at_roofline"' "$out/report.json" || { echo "unexpected class"; cat "$out/report.json"; exit 1; }
grep -q '"n_regs"' "$out/report.json" || { echo "compile facts not joined"; exit 1; }
# Kernel not found is a clear failure.
if "$kiln" profile --script "$dir/kernels/vec_add.py" --python "$py" --ncu "$ncu" --no-device --kernel no_such_kernel 2> "$out/err.txt"; then
  echo "expected a failure for a kernel that does not exist"; exit 1
fi
grep -q "no kernel launch matching" "$out/err.txt" || { cat "$out/err.txt"; exit 1; }
echo "ok: $out"
