#!/usr/bin/env bash
# One device command of issue 16's last runs (session 11): kiln's time sweep of modules ALONE, then the plain
# checks outside kiln of the modules whose verdicts are unclassified; a short table last.
#
#   ALONE="m1 m2" REPEAT="m3 m4@0,5" PEAK="m5" SANITIZE="m6" AUTOTUNE="m7" bench/gpu/tritonbench_g_time_probes.sh
#
# 1. checks its inputs (every named module and its perf harness, python with torch and triton, the probe
#    scripts) and stops before any GPU work if one is missing;
# 2. ALONE: tritonbench_g_time_shard.sh with ALONE= only (one whole-pair batch, nothing else on the GPU; its
#    LIMIT_ALONE, PER_MODULE_ALONE_S, ALONE_NAME, SELF_REPEAT_S, KILN_BIN, KILN_CORPUS_DIR apply), its folder
#    tarred to $OUT/shard.tar.gz;
# 3. REPEAT: tritonbench_g_self_repeat.py per module in a process of its own (a fault that kills the CUDA
#    context stops only that module), REPEAT_S s each (default 60); `name@I,J` picks cases (default all);
#    PEAK: tbg_peak_probe.py (footprint and peak of a plain run, largest 2 cases), PEAK_S s each (default 60;
#    PEAK_IF_NOT_OK=1: only for a module the ALONE sweep named not ok); PLAIN: the module's file run as a script
#    (`python3 NAME.py`: its own test at its own sizes), twice, PLAIN_S s each (default 40);
#    SANITIZE: the file's own test through tbg_grad_layout_probe.py (the layout of the gradients each
#    autograd backward gets), plainly twice in one process, then under compute-sanitizer memcheck with the
#    caching allocator off (each tensor its own allocation: a read past one is reported), as written and with
#    contiguous gradients (the control), SANITIZE_S s each (default 120);
#    AUTOTUNE: tbg_autotune_timing.py (the module's own autotune time over its perf sweep, outside kiln),
#    AUTOTUNE_S s each (default 120; AUTOTUNE_IF_NOT_OK=1: not for a module ok in the ALONE sweep);
# 4. prints the kiln verdicts and one line per probed module (same/differs/fault per case) last; every log
#    in $OUT/probes.tar.gz.
# Without a GPU the probes are skipped (they need CUDA) unless PROBES_ON_CPU=1 (then they run on the CPU under
# Triton's interpreter: for testing this script).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${KILN_CORPUS_DIR:-}
[ -n "$corpus" ] || { [ -d "$root/corpus" ] && corpus=$root/corpus; } || corpus=$root/../shared/corpus
export KILN_CORPUS_DIR=$corpus PYTHONUNBUFFERED=1 KILN_PYTHON=${KILN_PYTHON:-python3}
OUT=${OUT:-/tmp/kiln-tbg-out}
export OUT
p=$OUT/probes
mkdir -p "$p"
G=$corpus/tritonbench/G
alone=(${ALONE:-})
repeat=(${REPEAT:-})
peak=(${PEAK:-})
plain=(${PLAIN:-})
sanitize=(${SANITIZE:-})
autotune=(${AUTOTUNE:-})
t0=$SECONDS

# 1. inputs
fail=0
for k in "${repeat[@]}" "${peak[@]}" "${plain[@]}" "${sanitize[@]}" "${autotune[@]}"; do
  n=${k%%@*}
  [ -f "$G/kernels/$n.py" ] && [ -f "$G/perf/${n}_perf.py" ] || { echo "missing: module $n under $G"; fail=1; }
done
"$KILN_PYTHON" -c 'import torch, triton' 2>/dev/null || { echo "missing: $KILN_PYTHON cannot import torch, triton"; fail=1; }
for f in tritonbench_g_time_shard.sh tritonbench_g_self_repeat.py tbg_peak_probe.py summarize_time_sweep.py \
  tbg_grad_layout_probe.py tbg_autotune_timing.py autotune_compile_probe.py; do
  [ -f "$here/$f" ] || { echo "missing: $here/$f"; fail=1; }
done
[ $fail -eq 0 ] || { echo "inputs missing: nothing run"; exit 2; }
gpu=$("$KILN_PYTHON" -c 'import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")' 2>/dev/null)
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
echo "gpu: $gpu; alone ${#alone[@]}, self-repeat ${#repeat[@]}, peak ${#peak[@]}, sanitize ${#sanitize[@]}" \
  "(compute-sanitizer: ${sanitizer:-none}), autotune ${#autotune[@]}"

# 2. kiln, alone
if [ ${#alone[@]} -gt 0 ]; then
  ALONE="${alone[*]}" TAR_ONLY=1 bash "$here/tritonbench_g_time_shard.sh" > "$p/shard.log" 2>&1
  echo "shard: rc=$? ($((SECONDS - t0)) s)"
  tail -n 3 "$p/shard.log"
fi

# 3. the plain checks outside kiln
probes=1
[ "$gpu" = none ] && [ -z "${PROBES_ON_CPU:-}" ] && probes=0
[ "$gpu" = none ] && export TRITON_INTERPRET=1
if [ $probes -eq 1 ]; then
  for k in "${repeat[@]}"; do
    n=${k%%@*}; cases=all
    [ "$n" != "$k" ] && cases=${k#*@}
    s=$SECONDS
    timeout "${REPEAT_S:-60}" "$KILN_PYTHON" "$here/tritonbench_g_self_repeat.py" --corpus "$corpus" --cases "$cases" \
      --out "$p/self_repeat_$n.jsonl" "$n" 2>&1 | grep -v '^warmup' | cut -c1-600 > "$p/self_repeat_$n.log"
    echo "self-repeat $n ($cases): rc=${PIPESTATUS[0]} in $((SECONDS - s)) s" | tee -a "$p/probes.log"
  done
  for n in "${plain[@]}"; do
    for r in 1 2; do
      s=$SECONDS
      (cd "$G/kernels" && timeout "${PLAIN_S:-40}" "$KILN_PYTHON" "$n.py") > "$p/plain_${n}_$r.log" 2>&1
      echo "plain $n run $r: rc=$? in $((SECONDS - s)) s; $(grep -v '^\s*$' "$p/plain_${n}_$r.log" | tail -n 1 | cut -c1-200)" \
        | tee -a "$p/probes.log"
    done
  done
  for n in "${peak[@]}"; do
    # PEAK_IF_NOT_OK=1: only a module that kiln's sweep above named not ok (an ok one fits with kiln's copies)
    if [ -n "${PEAK_IF_NOT_OK:-}" ] && ! grep -q "^  $n: " "$OUT/summary.txt" 2>/dev/null; then
      echo "peak $n: skipped (not named not ok above)" | tee -a "$p/probes.log"; continue
    fi
    s=$SECONDS
    timeout "${PEAK_S:-60}" "$KILN_PYTHON" "$here/tbg_peak_probe.py" --corpus "$corpus" --cases "${PEAK_CASES:-largest:2}" \
      "$n" > "$p/peak_$n.log" 2>&1
    echo "peak $n: rc=$? in $((SECONDS - s)) s" | tee -a "$p/probes.log"
  done
  for n in "${sanitize[@]}"; do
    s=$SECONDS
    timeout "${SANITIZE_S:-120}" "$KILN_PYTHON" "$here/tbg_grad_layout_probe.py" --corpus "$corpus" --runs 2 "$n" \
      > "$p/sanitize_${n}_plain.log" 2>&1
    echo "sanitize $n plain (2 runs): rc=$? in $((SECONDS - s)) s; $(grep -E 'results of|Error' "$p/sanitize_${n}_plain.log" \
      | tail -n 1 | cut -c1-200)" | tee -a "$p/probes.log"
    [ -n "$sanitizer" ] || { echo "sanitize $n: no compute-sanitizer here" | tee -a "$p/probes.log"; continue; }
    for how in as_written contiguous; do
      flag=(); [ $how = contiguous ] && flag=(--contiguous)
      s=$SECONDS
      PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout "${SANITIZE_S:-120}" "$sanitizer" --tool memcheck --print-limit 20 \
        "$KILN_PYTHON" "$here/tbg_grad_layout_probe.py" --corpus "$corpus" "${flag[@]}" "$n" > "$p/sanitize_${n}_$how.log" 2>&1
      rc=$?
      f=$p/sanitize_${n}_$how.log
      echo "sanitize $n memcheck $how: rc=$rc in $((SECONDS - s)) s; $(grep -m 1 -E 'Invalid .* (read|write)' "$f" \
        | cut -c1-100) $(grep -m 1 -E '^=+ +at ' "$f" | cut -c1-100) $(grep -m 1 -E 'nearest allocation' "$f" \
        | cut -c1-140) $(grep -E 'ERROR SUMMARY' "$f" | tail -n 1)" | tee -a "$p/probes.log"
    done
  done
  for n in "${autotune[@]}"; do
    # (an ok verdict in the ALONE sweep's results; a module cut without a verdict is probed)
    if [ -n "${AUTOTUNE_IF_NOT_OK:-}" ] && tar -xzOf "$OUT/shard.tar.gz" shard/all.jsonl 2>/dev/null \
      | grep -q "\"id\":\"$n\".*\"verdict\":\"ok\""; then
      echo "autotune $n: skipped (ok in the sweep above)" | tee -a "$p/probes.log"; continue
    fi
    s=$SECONDS
    timeout "${AUTOTUNE_S:-120}" "$KILN_PYTHON" "$here/tbg_autotune_timing.py" --corpus "$corpus" \
      --limit "$(( ${AUTOTUNE_S:-120} - 15 ))" --out "$p/autotune_$n.jsonl" "$n" > "$p/autotune_$n.log" 2>&1
    echo "autotune $n: rc=$? in $((SECONDS - s)) s; $(tail -n 1 "$p/autotune_$n.log" | cut -c1-250)" | tee -a "$p/probes.log"
  done
fi
# 4. the table
tar -czf "$OUT/probes.tar.gz" -C "$OUT" probes
echo "== kiln, alone ($((SECONDS - t0)) s in all, gpu: $gpu)"
[ -f "$OUT/summary.txt" ] && cat "$OUT/summary.txt"
echo "== plain runs outside kiln"
grep -h -E '^(plain|sanitize|autotune) ' "$p/probes.log" 2>/dev/null
"$KILN_PYTHON" - "$p" <<'EOF'
import glob, json, os, sys
p = sys.argv[1]
for f in sorted(glob.glob(p + "/self_repeat_*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        by = {}
        for c, v in r.get("cases", {}).items():
            by.setdefault(v["result"], []).append(c.split("_")[1])
        first = next((f"{c}: {v['note'][:160]}" for c, v in r.get("cases", {}).items() if v["result"] != "same"), "")
        print(f"{r['name']} ({r.get('elapsed_s')} s): " + ", ".join(f"{k} {','.join(v)}" for k, v in by.items())
              + (f"; {r['error'][:160]}" if r.get("error") else "") + (f"; first {first}" if first else ""))
for f in sorted(glob.glob(p + "/self_repeat_*.log")):
    n = os.path.basename(f)[len("self_repeat_"):-len(".log")]
    j = f"{p}/self_repeat_{n}.jsonl"
    if not os.path.exists(j) or not open(j).read().strip():
        print(f"{n}: no record (cut at its limit); last: {open(f).read()[-200:]!r}")
for f in sorted(glob.glob(p + "/peak_*.log")):
    n = os.path.basename(f)[len("peak_"):-len(".log")]
    lines = open(f).read().splitlines()
    mine = [l for l in lines if l.startswith(n)]
    for line in mine or [f"{n}: no result; last: {lines[-1] if lines else ''}"]:
        print(line[:300])
EOF
