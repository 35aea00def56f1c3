#!/usr/bin/env bash
# One device command: bench/serve/throughput.py on the GPU host with a carried kiln (see bench/gpu/lib.sh):
#   .device-carry/NAME/{bin/kiln + libs, worker/, bench/, corpus/kernelbench/level1/}
#   bash .device-carry/NAME/bench/serve/throughput_gpu.sh .device-carry/NAME [SECONDS] [FRESH] [CONCURRENCY]
set -uo pipefail
c=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$c/bin KILN_WORKER_DIR=$c/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/kiln-out}
w=/tmp/serve_tp; rm -rf "$w"; mkdir -p "$w" "$OUT"  # few files come back: a tarball and the summary
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
cat "$w/nvidia_smi.csv"
python3 "$c/bench/serve/throughput.py" --kiln "$c/bin/kiln" --corpus "$c/corpus" --out "$w" \
  --seconds "${2:-40}" --fresh "${3:-4}" --concurrency "${4:-8}" ${TP_ARGS:-} 2>&1 | tee "$w/log.txt"
rc=$?
grep -E "^kiln_serve_(gpu|workers|evaluations_per|item_latency)" "$w/metrics.txt"
tar -czf "$OUT/serve_tp.tar.gz" -C /tmp serve_tp
cp "$w/summary.md" "$w/summary.json" "$OUT/" 2>/dev/null
exit $rc
