# Sourced by the GPU job scripts in bench/gpu/: the environment (session_env.sh), a work folder under $OUT,
# the GPU's identity, and the helpers several jobs share. Each job fits one 10-minute device command.
source "$(dirname "${BASH_SOURCE[0]}")/session_env.sh"
cd "$root"
JOB=${JOB:-$(basename "$0" .sh)}
w=$OUT/$JOB; mkdir -p "$w"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv > "$w/nvidia_smi.csv" 2>&1
G=$KILN_CORPUS_DIR/tritonbench/G/kernels
t0=$SECONDS

# The compiled-path rewrite check (every $EVERY-th variant, $1 jobs) into $w/rewrite_equivalence.{log,json}.
rewrites() {
  timeout ${REQ_S:-520} python3 bench/gpu/rewrite_equivalence.py --tool .device-carry/bin/kiln_rewrite_apply \
    --every ${EVERY:-2} --jobs "$1" --timeout 120 ${SKIP_DONE:+--skip-done "$SKIP_DONE"} \
    --json "$w/rewrite_equivalence.json" > "$w/rewrite_equivalence.log" 2>&1
}

# The named G modules again (mode check, $1 check workers, $2 s per module) into $w/recheck.jsonl.
recheck() {
  local workers=$1 limit=$2; shift 2
  for k in "$@"; do echo "{\"id\": \"$k\", \"task\": \"$G/$k.py\"}"; done > /tmp/recheck.jsonl
  timeout ${RECHECK_S:-$((limit + 30))} "$KILN_BIN" eval --batch /tmp/recheck.jsonl --mode check --check-workers "$workers" \
    --timeout "$limit" --no-db --out "$w/recheck.jsonl" > /dev/null 2> "$w/recheck_stderr.txt"
}

# bench_step NAME LIMIT_S ARGS...: one `kiln bench ARGS` into $w/${BENCH_OUT:-NAME} (records in $BENCH_DB), cut
# at LIMIT_S (SIGINT: kiln keeps the results it has) and then reported as it stands (--report-only); its line
# in $w/summary.txt: exit status, wall time, result lines, the table's first row, the legacy/compile line.
bench_step() {
  local name=$1 limit=$2 s=$SECONDS rc n out=$w/${BENCH_OUT:-$1}
  shift 2
  timeout -s INT -k 20 "$limit" "$KILN_BIN" bench "$@" --out "$out" --db "${BENCH_DB:-/tmp/kiln-bench-steps.db}" > "$w/$name.txt" 2> "$w/$name.err"
  rc=$?
  if [ ! -f "$out/summary.json" ] || [ $rc -ge 124 ]; then
    "$KILN_BIN" bench "$@" --out "$out" --report-only > "$w/$name.txt" 2>> "$w/$name.err"
  fi
  n=$(wc -l < "$out/results.jsonl" 2>/dev/null || echo 0)
  echo "$name rc=$rc wall $((SECONDS - s)) s, $n result lines: $(grep -m1 '^| [^-M]' "$w/$name.txt")" | tee -a "$w/summary.txt"
  grep -m1 -i "legacy stdout exec\|torch.compile baseline" "$w/$name.txt" | tee -a "$w/summary.txt"
}

# Ends a job: its wall time, a tarball of its folder, and its summary last (the device reply shows the tail).
finish() {
  echo "$JOB in $((SECONDS - t0)) s"
  tar -czf "$OUT/$JOB.tar.gz" -C "$OUT" "$JOB"
  cat "$w/summary.txt" 2>/dev/null
}
