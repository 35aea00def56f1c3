#!/usr/bin/env bash
# Verified evaluations per minute on one GPU: `kiln eval --batch` against a one-fresh-process-per-candidate
# harness of the same protocol strength (same worker, same trials, same timing), side by side in one run.
#   OUT=dir bash bench/eval_throughput/run.sh [KILN_BIN] [rounds]
# Order: kiln, fresh, kiln, fresh ... (interleaved, `rounds` times; default 1). Prints a table last.
# CHECK_WORKERS=K: kiln's check workers per GPU (default: kiln's automatic choice; 0: the unpipelined batch).
# NO_FRESH=1: skip the fresh harness (its times from an earlier run are not reused).
# FRESH_EVERY=k: the fresh harness runs every k-th candidate only (it has no per-batch cost to amortize,
#   so its rate per candidate does not depend on the count; the table reports how many it ran).
# TIME_ISOLATION=shared|fork: kiln's timing-stage isolation (default kiln's: shared).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kiln=${1:-$root/build/release/kiln}
rounds=${2:-1}
py=${KILN_PYTHON:-python3}
corpus=${KILN_CORPUS_DIR:-$root/../shared/corpus}
OUT=${OUT:-/tmp/kiln_throughput}
work=$(mktemp -d)
mkdir -p "$OUT"
"$py" "$root/bench/eval_throughput/gen_candidates.py" --corpus "$corpus" --out "$work" --blocks "${TP_BLOCKS:-512,1024,2048,4096}" >&2
n=$(wc -l < "$work/pairs.jsonl")
for r in $(seq 1 "$rounds"); do
  # Distinct Triton cache per run so neither side reuses the other's compiled kernels.
  t0=$(date +%s.%N)
  TRITON_CACHE_DIR=$work/cache_kiln_$r KILN_PYTHON=$py "$kiln" eval --batch "$work/pairs.jsonl" --mode time \
    --no-db --out "$OUT/kiln_round$r.jsonl" ${CHECK_WORKERS:+--check-workers "$CHECK_WORKERS"} \
    ${TIME_ISOLATION:+--time-isolation "$TIME_ISOLATION"} \
    2>>"$OUT/kiln_stderr.txt"
  t1=$(date +%s.%N)
  if [ "${NO_FRESH:-0}" = 1 ]; then
    : > "$OUT/fresh_round$r.jsonl"
  else
    TRITON_CACHE_DIR=$work/cache_fresh_$r "$py" "$root/bench/eval_throughput/fresh_harness.py" "$work/requests" \
      --python "$py" --every "${FRESH_EVERY:-1}" --out "$OUT/fresh_round$r.jsonl" 2>>"$OUT/fresh_stderr.txt" >/dev/null
  fi
  t2=$(date +%s.%N)
  echo "$r $t0 $t1 $t2" >> "$OUT/throughput_times.txt"
done
"$py" - "$OUT" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
print(f"candidates: {n} (KernelBench level-1 elementwise, batch_size=64 dim=393216, mode time, 3 trials)")
print(f"{'round':<6} {'kiln_n':>6} {'kiln_s':>8} {'fresh_n':>7} {'fresh_s':>8} {'kiln_ok':>8} {'fresh_ok':>9} {'kiln/min':>9} {'fresh/min':>10} {'ratio':>6}")
for line in open(f"{out}/throughput_times.txt"):
    r, t0, t1, t2 = line.split()
    tk, tf = float(t1) - float(t0), float(t2) - float(t1)
    ok_k = sum(1 for l in open(f"{out}/kiln_round{r}.jsonl") if json.loads(l).get("verdict") == "ok")
    fresh = [json.loads(l) for l in open(f"{out}/fresh_round{r}.jsonl")]
    ok_f = sum(1 for x in fresh if x.get("verdict") == "ok")
    nf = len(fresh)
    rk, rf = n * 60 / tk, nf * 60 / max(tf, 1e-9)
    print(f"{r:<6} {n:6d} {tk:8.1f} {nf:7d} {tf:8.1f} {ok_k:8d} {ok_f:9d} {rk:9.1f} {rf:10.1f} {rk / max(rf, 1e-9):6.2f}")
# where kiln's time went: per pair, the check stage and the timing stage (pipelined batches)
for line in open(f"{out}/throughput_times.txt"):
    r = line.split()[0]
    chk, tim = [], []
    for l in open(f"{out}/kiln_round{r}.jsonl"):
        res = json.loads(l).get("result") or {}
        if "check_stage" in res:
            chk.append(res["check_stage"].get("elapsed_s") or 0)
            tim.append(res.get("time_stage_elapsed_s") or 0)
    if chk:
        print(f"round {r}: {len(chk)} pipelined pairs, check stage mean {sum(chk) / len(chk):.2f} s (in parallel), "
              f"timing stage mean {sum(tim) / len(tim):.2f} s (serial), sum of timing stages {sum(tim):.1f} s")
PY
