#!/usr/bin/env bash
# GPU session I (session 3). Each phase fits one 10-minute command; results under $OUT/i, tarred to
# $OUT/session_i.tar.gz.
#   bench/gpu/run_i.sh probe          4 suite kernels (where does an optimize run's time go: the worker's
#                                     phases_s per candidate), the nondeterminism probe of the G modules
#                                     that mismatched against themselves, and those modules re-evaluated
#   bench/gpu/run_i.sh suite K N      suite shard K of N on this GPU (BUDGET s per kernel, default 45)
#   bench/gpu/run_i.sh autotune       kiln vs exhaustive on the same grid (bench/optimize_suite/grids)
#   bench/gpu/run_i.sh check          worker_gpu_check (quick) + the G sweep, resumable
source "$(dirname "$0")/session_env.sh"
cd "$root"
w=$OUT/i; mkdir -p "$w"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
G=$KILN_CORPUS_DIR/tritonbench/G/kernels
t0=$SECONDS
nd="chunk_gla_simple decay_cumsum index_select_bwd quantize_kv_copy quantize_copy_kv rotary_emb_nopad"
case "${1:-probe}" in
  probe)
    KILN_SUITE_DIR=/tmp/suite_i OUT=$w/probe_suite BUDGET=${BUDGET:-45} GRACE=40 timeout 330 \
      bash bench/optimize_suite/run.sh only add_example matmul_leakyrelu softmax_flaggems swiglu_backward \
      > "$w/probe_suite.log" 2>&1
    for k in $nd; do timeout 60 python3 bench/gpu/nondeterminism_probe.py "$G/$k.py" 2>&1 | tail -4; done \
      > "$w/nondeterminism.txt" 2>&1
    : > /tmp/nd.jsonl
    for k in $nd chunk_retention_ops; do echo "{\"id\": \"$k\", \"task\": \"$G/$k.py\"}" >> /tmp/nd.jsonl; done
    timeout 200 "$KILN_BIN" eval --batch /tmp/nd.jsonl --mode check --check-workers 7 --timeout 180 --no-db \
      --out "$w/nd_check.jsonl" > "$w/nd_stdout.txt" 2> "$w/nd_stderr.txt"
    python3 bench/gpu/summarize_verdicts.py "$w/nd_check.jsonl" "nondeterministic G modules (check)" > "$w/summary.txt"
    python3 - "$w/probe_suite" >> "$w/summary.txt" <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    j = json.load(open(f))
    print(f.rsplit("/", 1)[-1], "wall", round(j.get("wall_s", 0), 1), "measured", j.get("measured"), "speedup",
          j.get("geomean_speedup"), "stop", j.get("stop_reason"))
    for c in j.get("candidates", [])[:6]:
        print("   ", c["id"], c["origin"], c["verdict"], "eval_s", round(c.get("eval_s", 0), 2), c.get("phases_s"))
PY
    cat "$w/nondeterminism.txt" >> "$w/summary.txt" ;;
  suite)
    KILN_SUITE_DIR=/tmp/suite_i OUT=$w/suite BUDGET=${BUDGET:-55} GRACE=40 timeout ${SUITE_S:-570} \
      bash bench/optimize_suite/run.sh shard "$2" "$3" > "$w/suite_$2.log" 2>&1
    KILN_SUITE_DIR=/tmp/suite_i OUT=$w/suite bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1 ;;
  autotune)
    KILN_SUITE_DIR=/tmp/suite_iat OUT=$w/autotune BUDGET=${BUDGET:-45} EX_BUDGET=${EX_BUDGET:-170} timeout ${AT_S:-570} \
      bash bench/optimize_suite/run.sh autotune > "$w/autotune.log" 2>&1
    KILN_SUITE_DIR=/tmp/suite_iat OUT=$w/autotune bash bench/optimize_suite/run.sh summary > "$w/summary.txt" 2>&1 ;;
  check)
    : > "$w/summary.txt"
    if [ -z "${NO_GPU_CHECK:-}" ]; then
      OUT=$w/gpu_check timeout 300 bash bench/gpu/worker_gpu_check.sh --quick > "$w/gpu_check.log" 2>&1
      grep -c PASS "$w/gpu_check/worker_gpu_check.txt" > "$w/summary.txt"; grep FAIL "$w/gpu_check/worker_gpu_check.txt" >> "$w/summary.txt"
    fi
    ls "$G"/*.py | python3 -c 'import sys,json,os; [print(json.dumps({"id": os.path.basename(p.strip())[:-3], "task": os.path.abspath(p.strip())})) for p in sys.stdin]' > /tmp/tbg.jsonl
    timeout ${SWEEP_S:-270} "$KILN_BIN" eval --batch /tmp/tbg.jsonl --mode check --check-workers 10 --timeout 240 --no-db \
      --out /tmp/tbg_check.jsonl --resume > "$w/sweep_stdout.txt" 2> "$w/sweep_stderr.txt"
    cp /tmp/tbg_check.jsonl "$w/"
    python3 bench/gpu/summarize_verdicts.py "$w/tbg_check.jsonl" "TritonBench-G self-eval (check)" >> "$w/summary.txt"
    for k in $nd; do timeout 20 python3 bench/gpu/nondeterminism_probe.py "$G/$k.py" 2>&1 | tail -4; done \
      > "$w/nondeterminism.txt" 2>&1 ;;
esac
echo "phase ${1:-probe} in $((SECONDS - t0)) s"
tar -czf "$OUT/session_i.tar.gz" -C "$OUT" i
cat "$w/summary.txt"
