#!/usr/bin/env bash
# GPU session for issue 14 (verdicts). Runs from a carried tree (worker/, tests/, bench/, bin/kiln, corpus/, as
# copied into .device-carry/verdict on the development machine); results under $OUT/verdicts, tarred to
# $OUT/verdicts_<phase>.tar.gz.
#   bash .device-carry/verdict/bench/gpu/verdict_checks.sh kb    the issue-14 suite candidates on the compiled path
#                                                              (transcript) + KernelBench level-1 at real sizes
#   bash .device-carry/verdict/bench/gpu/verdict_checks.sh tbg   every TritonBench-G module against itself (mode
#                                                              check, 10 check workers), compared with the last
#                                                              sweep (bench/results/session4/h100_tritonbench_g_check.jsonl)
# KB_ONLY=TASK:CAND.py,...: only these KernelBench cases; TBG_LIMIT=N: only the first N modules; TBG_ONLY="a b": only these (a re-check); INTERPRET=1: under the interpreter (a CPU dry run of this script).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
export KILN_WORKER_DIR=$here/worker KILN_PYTHON=${KILN_PYTHON:-python3} PYTHONUNBUFFERED=1
export KILN_CORPUS_DIR=${KILN_CORPUS_DIR:-$here/corpus}
OUT=${OUT:-/tmp/kiln-out}
w=$OUT/verdicts; mkdir -p "$w"
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv > "$w/nvidia_smi.csv" 2>&1 || true
t0=$SECONDS
interp=(); [ -n "${INTERPRET:-}" ] && interp=(--interpret)
case "${1:-kb}" in
  kb)
    small=(); [ -n "${INTERPRET:-}" ] && small=(--small)
    timeout "${KB_S:-540}" "$KILN_PYTHON" "$here/bench/gpu/verdicts_gpu.py" --out "$w" --phase "${PHASE:-all}" \
      "${interp[@]}" "${small[@]}" --only "${KB_ONLY:-}" > "$w/kb_stdout.txt" 2>&1
    echo "kb rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt" ;;
  tbg)
    if [ -n "${TBG_ONLY:-}" ]; then for m in $TBG_ONLY; do echo "$KILN_CORPUS_DIR/tritonbench/G/kernels/$m.py"; done
    else ls "$KILN_CORPUS_DIR"/tritonbench/G/kernels/*.py | head -n "${TBG_LIMIT:-1000}"; fi | "$KILN_PYTHON" -c '
import json, os, sys
for p in sys.stdin:
    p = p.strip(); print(json.dumps({"id": os.path.basename(p)[:-3], "task": os.path.abspath(p)}))' > "$w/tbg_pairs.jsonl"
    timeout "${SWEEP_S:-430}" "$here/bin/kiln" eval --batch "$w/tbg_pairs.jsonl" --mode check --check-workers "${WORKERS:-10}" \
      --timeout 240 --no-db "${interp[@]}" --out "$w/tbg_check.jsonl" > "$w/sweep_stdout.txt" 2> "$w/sweep_stderr.txt"
    echo "sweep rc=$? in $((SECONDS - t0)) s" | tee -a "$w/times.txt"
    "$KILN_PYTHON" - "$here/bench/results/session4/h100_tritonbench_g_check.jsonl" "$w/tbg_check.jsonl" \
      > "$w/tbg_compare.txt" <<'PY'
import json, sys
def load(p):
    out = {}
    for l in open(p):
        j = json.loads(l)
        r = j.get("result") or {}
        out[j["id"]] = (j.get("verdict") or r.get("verdict"), [x.get("code") for x in r.get("reasons", [])], r)
    return out
before, now = load(sys.argv[1]), load(sys.argv[2])
ok_before = {k for k, v in before.items() if v[0] == "ok"}
ok_now = {k for k, v in now.items() if v[0] == "ok"}
print(f"ok before {len(ok_before)} of {len(before)}; now {len(ok_now)} of {len(now)} checked")
for k in sorted(ok_before - ok_now):
    print("LOST", k, now.get(k, ("not run",))[0], now.get(k, (0, []))[1], (now.get(k, (0, 0, {}))[2].get("message") or "")[:200])
for k in sorted(ok_now - ok_before):
    print("GAINED", k)
shares, foreign = [], []
for k, (v, codes, r) in sorted(now.items()):
    a = r.get("attribution") or {}
    if a.get("own_share") is not None:
        shares.append((a["own_share"], k))
    if a.get("foreign_kernels"):
        foreign.append((k, a.get("foreign_ms"), [f["name"] for f in a["foreign_kernels"][:3]]))
shares.sort()
print("own share (GPU time in the module's own kernels): lowest", shares[:8])
print("modules with foreign computing kernels (allowed: the reference launches the same):", len(foreign))
for f in foreign[:40]:
    print("  ", f)
PY
    cat "$w/tbg_compare.txt" ;;
esac
tar -czf "$OUT/verdicts_${1:-kb}.tar.gz" -C "$OUT" verdicts
