#!/usr/bin/env sh
# TritonBench-G modules against themselves in mode time on a GPU (issue 16), as a user runs it: one
# `kiln eval --batch --mode time` with its check workers. Each must be ok: matrix_transpose and matmul_tma
# draw random numbers in the timed call (no CUDA graph: method events_cold_l2_rng, and a failed capture
# no longer breaks torch's generator), attention_kernel writes its output into an input (in-place), and
# attention_llama and l2_norm_triton2 were false timed_output_mismatch rejections of an intermediate fix.
# Skips (77) without torch/triton, a GPU or the corpus.
set -u
kiln=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${KILN_CORPUS_DIR:-$root/../shared/corpus}
py=${KILN_PYTHON:-$root/.venv/bin/python3}
cuda=$("$py" -c 'import torch, triton; print(torch.cuda.is_available())' 2>/dev/null) || { echo "skip: $py lacks torch/triton"; exit 77; }
[ "$cuda" = "True" ] || { echo "skip: no GPU"; exit 77; }
G=$corpus/tritonbench/G/kernels
[ -d "$G" ] || { echo "skip: no corpus at $corpus"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in matrix_transpose matmul_tma attention_kernel attention_llama l2_norm_triton2; do
  printf '{"id": "%s", "task": "%s/%s.py", "candidate": null}\n' "$k" "$G" "$k"
done > "$tmp/pairs.jsonl"
KILN_PYTHON=$py "$kiln" eval --batch "$tmp/pairs.jsonl" --out "$tmp/out.jsonl" --mode time --no-db --timeout 180 \
  --quiet 2> "$tmp/stderr.txt"
"$py" - "$tmp/out.jsonl" <<'PY'
import json, sys
rows = {j["id"]: j for j in map(json.loads, open(sys.argv[1]))}
bad = 0
for k in ("matrix_transpose", "matmul_tma", "attention_kernel", "attention_llama", "l2_norm_triton2"):
    r = rows.get(k) or {}
    res = r.get("result") or {}
    if r.get("verdict") != "ok":
        bad += 1
        print(f"FAIL {k}: {r.get('verdict') or r.get('error')}: {(res.get('message') or '')[:300]}")
        continue
    methods = {c.get("timing_method") for c in res.get("cases") or [] if c["name"].startswith("perf_")}
    if k == "matrix_transpose" and methods != {"events_cold_l2_rng"}:
        bad += 1
        print(f"FAIL {k}: its perf calls draw random numbers, timed by {methods}")
        continue
    print(f"ok   {k} ({', '.join(sorted(m for m in methods if m))})")
sys.exit(1 if bad else 0)
PY
