#!/usr/bin/env bash
# GPU session D: diagnose the `kiln optimize` crash seen on the H200 (release binary with the crash
# reporter, the ASan/UBSan binary, and the same command without compile workers / without ncu), then the
# throughput benchmark (36 KernelBench level-1 candidates through kiln, every 3rd through the fresh harness).
source "$(dirname "$0")/session_env.sh"
# the committed worker (the working tree may hold edits in progress)
[[ -d $root/.device-carry/head/worker ]] && export KILN_WORKER_DIR=$root/.device-carry/head/worker
cd "$root"
w=$OUT/d; mkdir -p "$w"
asan=/tmp/kiln_asan
python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" \
  "$root/.device-carry/bin/kiln_asan.xz" "$asan" && chmod +x "$asan"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
{ which gdb valgrind; nproc; ldd "$asan"; } > "$w/host.txt" 2>&1
opt() {  # opt NAME BIN [extra args]: one optimize run of the bundled example, 55 s at most
  local name=$1 bin=$2; shift 2
  local t0=$SECONDS
  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 timeout 55 \
    "$bin" optimize examples/softmax --budget-seconds 25 --no-db --out "$w/$name.py" --json "$w/$name.json" \
    "$@" > "$w/$name.out" 2> "$w/$name.err"
  local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s $(grep -c . "$w/$name.err") stderr lines; $(grep -m1 -E 'result:|internal error|ERROR: AddressSanitizer|runtime error|free\(\)' "$w/$name.err" "$w/$name.out" | head -1)"
}
{
  opt release "$KILN_BIN"
  opt asan "$asan"
  opt release_nocompile "$KILN_BIN" --compile-jobs 0
  opt release_noprofile "$KILN_BIN" --no-profile
} | tee "$w/optimize_diag.txt"
OUT=$w/tp TP_BLOCKS=512,1024,2048,4096 FRESH_EVERY=3 timeout ${TP_S:-300} bash bench/eval_throughput/run.sh "$KILN_BIN" 1 \
  > "$w/throughput.log" 2>&1
echo "throughput rc=$?"
tar -czf "$OUT/session_d.tar.gz" -C "$OUT" d
echo "=== summary"; cat "$w/optimize_diag.txt"; tail -4 "$w/throughput.log"
