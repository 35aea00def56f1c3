#!/usr/bin/env bash
# Records real Nsight Compute CSVs for the profiling golden tests (tests/profile/data/).
#
# Run on the GPU host from the repository root, with the kiln build carried over:
#   bash bench/gpu/record_ncu.sh            # writes $OUT/kiln_ncu_data.tar.gz and $OUT/summary.txt
# Environment: OUT (default /tmp/kiln-ncu-out), KILN (default build/h4/kiln, else build/*/kiln),
# KILN_PYTHON (default python3), KILN_NCU (default: PATH, /opt/nvidia/nsight-compute/*/ncu,
# /usr/local/cuda/bin/ncu).
#
# For each kernel in tests/profile/kernels/ (memory-bound at the roof, uncoalesced with headroom,
# small grid, register-limited occupancy, spills, bf16 GEMM, fp32 ieee GEMM, partial wave, tiny,
# two kernels) it runs `kiln profile --script` (the exact ncu command kiln uses: raw page, the
# metric list of bench/gpu/ncu_metrics.txt, --clock-control none, the kiln_profile NVTX range) and
# keeps: <name>.csv (raw ncu output), <name>.facts.json (compile facts), <name>.report.json and
# .txt (kiln's diagnosis), <name>.time (wall seconds of the kiln profile run). It measures the
# device peaks first (kiln device --json --refresh; a direct torch measurement when the worker
# cannot) into device.json. If kiln itself fails for a kernel, ncu is run directly with the same
# options so the CSV is still recorded. The lead unpacks the tarball into tests/profile/data/.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
OUT=${OUT:-/tmp/kiln-ncu-out}
WORK=$(mktemp -d /tmp/kiln-ncu-XXXXXX)   # outside $OUT: only the tarball and the summary go back
DATA="$WORK/data"
mkdir -p "$DATA" "$OUT"
BUDGET_S=${KILN_RECORD_BUDGET_S:-480}     # stop starting new recordings after this many seconds
pack() { cp "$SUMMARY" "$DATA/summary.txt" 2>/dev/null; tar -C "$WORK" -czf "$OUT/kiln_ncu_data.tar.gz" data; }
PY=${KILN_PYTHON:-python3}
KILN=${KILN:-}
if [ -z "$KILN" ]; then
  for k in build/h4/kiln build/release/kiln build/*/kiln; do [ -x "$k" ] && { KILN=$ROOT/$k; break; }; done
fi
NCU=${KILN_NCU:-$(command -v ncu || ls -1d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort | tail -1)}
[ -z "$NCU" ] && [ -x /usr/local/cuda/bin/ncu ] && NCU=/usr/local/cuda/bin/ncu
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
log() { echo "$@" | tee -a "$SUMMARY"; }
log "kiln: ${KILN:-none}  python: $PY  ncu: ${NCU:-none}"
log "ncu version: $("$NCU" --version 2>&1 | tail -1)"
log "gpu: $(nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
"$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" 2>&1 | tee -a "$SUMMARY"
export PYTHONPATH="$ROOT/worker${PYTHONPATH:+:$PYTHONPATH}"
export KILN_PYTHON="$PY" KILN_NCU="$NCU"

# 1. Device peaks.
t0=$(date +%s.%N)
if [ -n "$KILN" ] && timeout 240 "$KILN" device --json --refresh --python "$PY" --cache-dir "$WORK/cache" > "$DATA/device.json" 2> "$DATA/device.err"; then
  log "device: measured by kiln device in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
else
  log "device: kiln device failed ($(tail -1 "$DATA/device.err" 2>/dev/null)); measuring with torch directly"
  "$PY" - > "$DATA/device.json" 2>> "$DATA/device.err" <<'PYEOF'
import json, time, torch
d = torch.cuda.get_device_properties(0)
def bench(fn, reps=20):
    fn(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    return sorted(ts)[len(ts) // 2]
n = 1 << 30
a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
bw = 2 * n / bench(lambda: b.copy_(a))
del a, b
peaks = {}
N = 8192
for name, dt in (("float32", torch.float32), ("tf32", torch.float32), ("bfloat16", torch.bfloat16), ("float16", torch.float16)):
    torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
    x = torch.randn(N, N, device="cuda", dtype=dt); y = torch.randn(N, N, device="cuda", dtype=dt)
    peaks[name] = 2 * N ** 3 / bench(lambda: x @ y, 10)
try:
    x = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn); y = torch.randn(N, N, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device="cuda")
    peaks["float8_e4m3fn"] = 2 * N ** 3 / bench(lambda: torch._scaled_mm(x, y, one, one, out_dtype=torch.bfloat16), 10)
except Exception as e:  # noqa: BLE001
    pass
print(json.dumps({"schema": "kiln.device/1", "note": "measured by bench/gpu/record_ncu.sh (torch fallback)",
  "device": {"index": 0, "name": d.name, "uuid": "GPU-" + str(getattr(d, "uuid", "unknown")), "sm_count": d.multi_processor_count,
             "l2_bytes": getattr(d, "L2_cache_size", 0), "smem_per_block_optin": getattr(d, "shared_memory_per_block_optin", 0),
             "regs_per_sm": getattr(d, "regs_per_multiprocessor", 0), "total_mem_bytes": d.total_memory, "cc": [d.major, d.minor]},
  "peaks": {"dram_bytes_per_s": bw, "matmul_flops_per_s": peaks}, "versions": {"torch": torch.__version__}}, indent=2))
PYEOF
fi
cat "$DATA/device.json" | head -40 >> "$SUMMARY"
if "$PY" -c "import json,sys; json.load(open(sys.argv[1]))['peaks']['dram_bytes_per_s']" "$DATA/device.json" 2>/dev/null; then
  DEV=(--device-file "$DATA/device.json")
else
  log "device: no valid peaks; profiling without roofline fractions"
  mv "$DATA/device.json" "$DATA/device.invalid" 2>/dev/null
  DEV=(--no-device)
fi

# 2. One ncu recording per kernel.
METRICS=$(paste -sd, bench/gpu/ncu_metrics.txt)
pack
for name in vec_add gemm_bf16 gemm_fp32_ieee transpose_naive small_grid softmax_regs softmax_spill partial_wave tiny two_kernels; do
  f=tests/profile/kernels/$name.py
  if [ "$SECONDS" -gt "$BUDGET_S" ]; then log "--- $name: skipped (time budget)"; continue; fi
  log "--- $name"
  rm -f "$DATA/$name.facts.json"
  t0=$(date +%s.%N)
  ok=0
  if [ -n "$KILN" ]; then
    KILN_FACTS_OUT="$DATA/$name.facts.json" timeout 200 "$KILN" profile --script "$f" --python "$PY" --ncu "$NCU" \
      "${DEV[@]}" --save-csv "$DATA/$name.csv" --json > "$DATA/$name.report.json" 2> "$DATA/$name.err" && ok=1
  fi
  t1=$(date +%s.%N)
  awk "BEGIN{printf \"%.1f\\n\", $t1 - $t0}" > "$DATA/$name.time"
  if [ $ok = 1 ]; then
    "$KILN" profile --from-csv "$DATA/$name.csv" $( [ -f "$DATA/device.json" ] && echo --device-file "$DATA/device.json") --source "$f" \
      $( [ -s "$DATA/$name.facts.json" ] && echo --facts "$DATA/$name.facts.json") \
      --html "$DATA/$name.html" > "$DATA/$name.txt" 2>&1
    log "kiln profile: $(cat "$DATA/$name.time") s; $(grep -E '^  class:' "$DATA/$name.txt" | head -3 | tr '\n' ' ')"
  else
    log "kiln profile failed: $(tail -3 "$DATA/$name.err" 2>/dev/null | tr '\n' ' ')"
    log "running ncu directly"
    KILN_FACTS_OUT="$DATA/$name.facts.json" timeout 200 "$NCU" --clock-control none --print-units base --csv --page raw \
      --metrics "$METRICS" --nvtx --nvtx-include kiln_profile/ -k regex:. --launch-skip 0 --launch-count 64 \
      --target-processes all "$PY" "$f" > "$DATA/$name.csv" 2> "$DATA/$name.ncu.err"
    log "ncu rc=$? $(grep -c '^\"[0-9]' "$DATA/$name.csv") kernel rows; $(grep '==ERROR==' "$DATA/$name.csv" "$DATA/$name.ncu.err" | head -2)"
  fi
  pack
done

# 3. The gpu-labelled end-to-end test.
if [ -n "$KILN" ] && [ "$SECONDS" -lt "$((BUDGET_S + 20))" ]; then
  log "--- gpu end-to-end test"
  timeout 150 bash tests/profile/gpu_e2e.sh "$KILN" > "$DATA/gpu_e2e.log" 2>&1
  log "gpu_e2e.sh rc=$? ($(tail -1 "$DATA/gpu_e2e.log"))"
else
  log "--- gpu end-to-end test: skipped (time budget)"
fi
log "total ${SECONDS} s; wrote $OUT/kiln_ncu_data.tar.gz"
pack
rm -rf "$WORK"
