#!/usr/bin/env bash
# bench/gpu/opt3_parallel.sh: one suite per GPU of the host, each on its own GPU (CUDA_VISIBLE_DEVICES), suite
# folder and kiln database, with its own slices; its exit status fails when one suite fails; more slice lists
# than GPUs, or no GPU, is an error before anything starts. nvidia-smi and the per-GPU suite are stand-ins.
set -u
script=${1:?opt3_parallel.sh}
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
mkdir -p "$d/bin"
cat > "$d/bin/nvidia-smi" <<'SMI'
#!/usr/bin/env bash
n=${FAKE_GPUS:-2}
if [ "${1:-}" = "-L" ]; then for ((i = 0; i < n; i++)); do echo "GPU $i: Fake H200 (UUID: GPU-$i)"; done; exit 0; fi
for ((i = 0; i < n; i++)); do echo "Fake H200"; done
SMI
cat > "$d/suite.sh" <<'SUITE'
#!/usr/bin/env bash
echo "gpu=$CUDA_VISIBLE_DEVICES dir=$KILN_SUITE_DIR db=$KILN_DB slices=$1"
[ "$1" != "dev:9:1" ] || exit 3
sleep 1
SUITE
chmod +x "$d/bin/nvidia-smi"
run() { PATH=$d/bin:$PATH OPT3_SCRIPT=$d/suite.sh OUT=$d/out KILN_SUITE_DIR=$d/s bash "$script" "$@" 2>&1; }
fail() { echo "FAIL: $*"; exit 1; }

t0=$SECONDS
out=$(run "dev:0:2" "held:1:3"); rc=$?
[ $rc -eq 0 ] || fail "rc $rc: $out"
grep -q "gpu=0 dir=$d/s_g0 db=$d/s_g0.db slices=dev:0:2" <<< "$out" || fail "GPU 0's suite: $out"
grep -q "gpu=1 dir=$d/s_g1 db=$d/s_g1.db slices=held:1:3" <<< "$out" || fail "GPU 1's suite: $out"
[ $((SECONDS - t0)) -lt 2 ] || fail "the suites did not run side by side ($((SECONDS - t0)) s for two 1 s suites)"
[ -f "$d/out/s_g0.txt" ] && [ -f "$d/out/s_g1.txt" ] || fail "the GPUs' outputs are not in OUT"
grep -q "opt3_parallel: 2 GPU(s)" <<< "$out" || fail "no summary line: $out"

out=$(run "dev:0:1" "dev:9:1"); rc=$?
[ $rc -eq 1 ] || fail "a failed suite gave rc $rc: $out"

out=$(run "dev:0:1" "dev:1:1" "dev:2:1"); rc=$?
[ $rc -eq 2 ] && grep -q "3 slice lists for 2 GPU(s)" <<< "$out" || fail "three lists on two GPUs: rc $rc: $out"
[ ! -e "$d/s_g2.txt" ] || fail "a suite started although the lists were refused"

out=$(FAKE_GPUS=0 run "dev:0:1"); rc=$?
[ $rc -eq 2 ] && grep -q "no GPU" <<< "$out" || fail "no GPU: rc $rc: $out"

out=$(run); rc=$?
[ $rc -eq 2 ] && grep -q "usage" <<< "$out" || fail "no lists: rc $rc: $out"
echo "opt3_parallel: ok"
