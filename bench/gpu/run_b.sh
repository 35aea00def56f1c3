#!/usr/bin/env bash
# GPU session B: every TritonBench-G module against itself through `kiln eval --batch` (mode check, in
# shards that share the GPU: correctness needs no exclusive GPU), the rewrite-equivalence check on the
# compiled path alongside it, then the ncu recordings for the profile tests.
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/b; mkdir -p "$w"
shards=${SHARDS:-6}
python3 - "$KILN_CORPUS_DIR" "$w" "$shards" <<'PY'
import glob, json, os, sys
corpus, w, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(glob.glob(os.path.join(corpus, "tritonbench", "G", "kernels", "*.py")))
outs = [open(os.path.join(w, f"g_pairs_{i}.jsonl"), "w") for i in range(n)]
for i, f in enumerate(files):
    outs[i % n].write(json.dumps({"id": os.path.basename(f)[:-3], "task": f, "candidate": None}) + "\n")
PY
t0=$SECONDS
for i in $(seq 0 $((shards - 1))); do
  timeout 290 "$KILN_BIN" eval --batch "$w/g_pairs_$i.jsonl" --mode check --timeout 100 --no-db --quiet \
    --out "$w/g_results_$i.jsonl" > "$w/g_stdout_$i.txt" 2> "$w/g_stderr_$i.txt" &
done
timeout 290 python3 bench/gpu/rewrite_equivalence.py --tool .device-carry/bin/kiln_rewrite_apply --jobs 6 \
  --every "${RW_EVERY:-3}" --timeout 120 --json "$w/rewrite_equivalence.json" > "$w/rewrite_equivalence.log" 2>&1 &
wait
echo "sweep+rewrites: $((SECONDS - t0)) s"
cat "$w"/g_results_*.jsonl > "$w/tritonbench_g.jsonl"
python3 bench/gpu/summarize_verdicts.py "$w/tritonbench_g.jsonl" "TritonBench-G self-eval" | tee "$w/tritonbench_g_summary.txt"
tail -1 "$w/rewrite_equivalence.log"
OUT=$w/ncu KILN_RECORD_BUDGET_S=${NCU_BUDGET:-200} timeout 260 bash bench/gpu/record_ncu.sh > "$w/record_ncu.log" 2>&1
echo "record_ncu rc=$?"; cat "$w/ncu/summary.txt" 2>/dev/null | tail -14
tar -czf "$OUT/session_b.tar.gz" -C "$OUT" b
