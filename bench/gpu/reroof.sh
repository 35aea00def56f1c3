#!/usr/bin/env bash
# Session 23 (issue 21): the roofline of every tl.dot module of the generalization split again, with Hopper's fp16 /
# fp8 / int8 tensor counters (before, an fp16 GEMM's tensor work was not counted and it read as memory-bound at
# 26-30%). One `kiln profile --metrics roofline` per module of bench/gpu/reroof_list.txt ("part module case old"),
# at the case kiln optimize profiles; the device's peaks (int8 too) first. JSON per module under
# $OUT/reroof (tarred), a table last: module, old fraction, new fraction, bound by, main dtype, seconds.
# Usage (repository root on the GPU host, .device-carry carried): bash bench/gpu/reroof.sh [WALL_LIMIT_S]
JOB=reroof
source "$(dirname "$0")/lib.sh"
set -u
limit=${1:-500}
: > "$w/summary.txt"
timeout 120 "$KILN_BIN" device --json --refresh > "$w/device.json" 2> "$w/device.err"
echo "device rc=$? $(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['peaks']['matmul_flops_per_s']; print({k: round(v/1e12) for k, v in p.items() if v})" "$w/device.json" 2>&1)" | tee -a "$w/summary.txt"
# REROOF_PARTS: only these parts of the list (default: all), e.g. "held"
grep -v '^#' "$root/bench/gpu/reroof_list.txt" | grep -E "^(${REROOF_PARTS:-dev|held}) " | while read -r part m c old; do
  if [ $((SECONDS - t0)) -ge "$limit" ]; then echo "$part $m: not run (wall limit)" >> "$w/summary.txt"; continue; fi
  s=$SECONDS
  timeout 90 "$KILN_BIN" profile --task "$G/$m.py" --case "$c" --metrics roofline --device-file "$w/device.json" \
    --timeout 80 --json > "$w/$part.$m.json" 2> "$w/$part.$m.err"
  rc=$?
  python3 - "$w/$part.$m.json" "$part" "$m" "$c" "$old" "$rc" $((SECONDS - s)) >> "$w/summary.txt" << 'EOF'
import json, sys
path, part, m, case, old, rc, secs = sys.argv[1:]
try:
    j = json.load(open(path))
    ks = j.get("kernels") or []
    k = max(ks, key=lambda k: k.get("time_share", 0)) if ks else {}
    r = k.get("roofline") or {}
    d = (r.get("dtypes") or [{}])[0]
    print(f"{part:4} {m:28} {case:8} old {old:>8.8} new {r.get('fraction_of_roof', 0):.4f} {r.get('bound_by') or '-':8}"
          f" {d.get('dtype', '-'):14} {secs:>3} s rc={rc}")
except Exception as e:  # noqa: BLE001
    print(f"{part:4} {m:28} {case:8} old {old:>8.8} new -      rc={rc} {secs} s ({type(e).__name__})")
EOF
done
finish
