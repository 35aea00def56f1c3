#!/bin/sh
# `kiln optimize` end to end on a CPU machine through its GPU-only path: a fake GPU worker
# (fake_gpu_python.py, passed as --python: hello says "NVIDIA H200", device peaks, times that
# depend on the candidate's values) and a fake ncu (fake_ncu.sh, --ncu: prints a raw CSV recorded on
# an H200). The whole loop runs: baseline -> device peaks -> profile (ncu) -> diagnose -> candidates
# from the findings' moves -> parallel compile pool -> timing -> halving -> verification -> profile of
# the winner -> outputs (--out, --json, --html, records).
# usage: optimize_fake_gpu.sh KILN SOURCE_DIR CORPUS_DIR
set -u
kiln=$1
src=$2
corpus=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-opt-fake-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
py=$src/tests/search/fake_gpu_python.py
ncu=$src/tests/search/fake_ncu.sh
export KILN_CACHE_DIR="$tmp/cache" FAKE_GPU_LOG="$tmp/gpu.log"
fail=0
say() { echo "optimize_fake_gpu: $*"; }
bad() { say "FAIL: $*"; fail=1; }
json() {  # json FILE EXPR -> prints eval(EXPR) with j = the parsed file
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"
}

# 1. kiln's own task format, findings with moves (small grid): the search runs and finds the optimum
#    (BLOCK=1024, 4 warps: the fake GPU's optimum, which lies beyond 8x the original BLOCK=64 and is
#    in the space only through the canonical 1-D range), with 4 compile workers in parallel.
FAKE_NCU_CSV=$src/tests/profile/data/small_grid.csv "$kiln" optimize "$src/examples/softmax" \
  --python "$py" --ncu "$ncu" --budget-seconds 60 --compile-jobs 4 --no-db \
  --out "$tmp/X.py" --json "$tmp/J.json" --html "$tmp/H.html" >"$tmp/out1" 2>"$tmp/err1"
rc=$?
if [ $rc -ne 0 ]; then
  bad "softmax: exit $rc"; cat "$tmp/out1" "$tmp/err1"
else
  [ "$(json "$tmp/J.json" "j['mode']")" = profiled ] || bad "softmax: mode is not profiled"
  [ "$(json "$tmp/J.json" "j['improved']")" = True ] || bad "softmax: no improvement found"
  [ "$(json "$tmp/J.json" "j['best_config']")" = "{'BLOCK': 1024, 'num_stages': 3, 'num_warps': 4}" ] ||
    bad "softmax: best config $(json "$tmp/J.json" "j['best_config']")"
  [ "$(json "$tmp/J.json" "j['profile_before']['bound']")" = small_grid ] || bad "softmax: diagnosis not joined"
  [ "$(json "$tmp/J.json" "j['profile_after'] is not None")" = True ] || bad "softmax: winner not profiled"
  [ "$(json "$tmp/J.json" "j['compiled'] > 0")" = True ] || bad "softmax: the compile pool did not run"
  [ "$(json "$tmp/J.json" "sorted(j['startup_s'])")" = "['baseline_starts_at_s', 'before_search_loop_s', 'device_and_worker_start_s', 'hello_s']" ] ||
    bad "softmax: startup_s is $(json "$tmp/J.json" "j.get('startup_s')")"
  [ "$(json "$tmp/J.json" "0 < j['startup_s']['before_search_loop_s'] <= j['startup_s']['baseline_starts_at_s'] <= j['wall_s']")" = True ] ||
    bad "softmax: startup times out of order $(json "$tmp/J.json" "j.get('startup_s')")"
  grep -q "BLOCK=1024" "$tmp/X.py" || bad "softmax: --out is not the winner"
  grep -q "<html" "$tmp/H.html" || bad "softmax: no HTML report"
  grep -q "eval compile" "$tmp/gpu.log" || bad "softmax: no compile request reached a worker"
  grep -q "^profile" "$tmp/gpu.log" || bad "softmax: ncu did not run the worker"
fi

# 2. At the roofline (vec_add's recording): the original is kept and written unchanged.
FAKE_NCU_CSV=$src/tests/profile/data/vec_add.csv "$kiln" optimize "$src/examples/softmax" \
  --python "$py" --ncu "$ncu" --budget-seconds 60 --no-db --out "$tmp/K.py" --json "$tmp/K.json" -q \
  >"$tmp/out2" 2>"$tmp/err2"
rc=$?
if [ $rc -ne 0 ]; then
  bad "at roofline: exit $rc"; cat "$tmp/out2" "$tmp/err2"
else
  [ "$(json "$tmp/K.json" "j['stop_reason']")" = "at roofline" ] || bad "at roofline: stop reason"
  cmp -s "$tmp/K.py" "$src/examples/softmax/softmax.py" || bad "at roofline: --out differs from the original"
fi

# 3. A TritonBench-G module, largest case only, records in a database, more compile workers than
#    candidates per round.
tb=$corpus/tritonbench/G/kernels/add_example.py
if [ -f "$tb" ]; then
  FAKE_NCU_CSV=$src/tests/profile/data/transpose_naive.csv "$kiln" optimize "$tb" --python "$py" --ncu "$ncu" \
    --budget-seconds 60 --search-cases largest --compile-jobs 8 --db "$tmp/D.db" --json "$tmp/T.json" \
    --html "$tmp/T.html" -o "$tmp/O.py" -q >"$tmp/out3" 2>"$tmp/err3"
  rc=$?
  if [ $rc -ne 0 ]; then
    bad "tritonbench: exit $rc"; cat "$tmp/out3" "$tmp/err3"
  else
    [ "$(json "$tmp/T.json" "j['mode']")" = profiled ] || bad "tritonbench: mode is not profiled"
    [ "$(json "$tmp/T.json" "j['improved']")" = True ] || bad "tritonbench: no improvement found"
    [ "$(json "$tmp/T.json" "j['run_id'] > 0")" = True ] || bad "tritonbench: not recorded"
    # default --cases for a perf harness: the 3 largest sizes (the fake resolves them to its last 3 cases)
    [ "$(json "$tmp/T.json" "any('3 largest sizes' in n for n in j['notes'])")" = True ] ||
      bad "tritonbench: no note about the default cases"
    grep -q "eval time cases=@largest:3" "$tmp/gpu.log" || bad "tritonbench: the baseline did not ask for @largest:3"
  fi
else
  say "no corpus at $corpus: TritonBench-G case skipped"
fi

# 4. --grid: the search stays inside the given grid (unlisted tunables keep the original's value; the
#    original's own values stay representable), e.g. for a comparison with Triton's autotuner.
printf '{"BLOCK": [128, 256], "num_warps": [4]}\n' > "$tmp/grid.json"
FAKE_NCU_CSV=$src/tests/profile/data/small_grid.csv "$kiln" optimize "$src/examples/softmax" \
  --python "$py" --ncu "$ncu" --budget-seconds 60 --compile-jobs 2 --no-db --grid "$tmp/grid.json" \
  --json "$tmp/G.json" -q >"$tmp/out4" 2>"$tmp/err4"
rc=$?
if [ $rc -ne 0 ]; then
  bad "grid: exit $rc"; cat "$tmp/out4" "$tmp/err4"
else
  [ "$(json "$tmp/G.json" "all(c['config']['BLOCK'] in (64, 128, 256) and c['config']['num_warps'] in (1, 4) and c['config']['num_stages'] == 3 for c in j['candidates'])")" = True ] ||
    bad "grid: a candidate outside the grid: $(json "$tmp/G.json" "[c['config'] for c in j['candidates']]")"
  [ "$(json "$tmp/G.json" "len(j['candidates']) > 1")" = True ] || bad "grid: nothing searched"
fi
printf '{"BLOCK_Q": [1]}\n' > "$tmp/badgrid.json"
"$kiln" optimize "$src/examples/softmax" --python "$py" --no-db --grid "$tmp/badgrid.json" -q >"$tmp/out5" 2>&1
rc=$?
{ [ $rc -eq 2 ] && grep -q "badgrid.json: error: grid parameter 'BLOCK_Q' is not a tunable" "$tmp/out5"; } ||
  { bad "bad grid: exit $rc"; cat "$tmp/out5"; }

# 6. A candidate far slower than the original (BLOCK=2048 answers after 60 s, a tuned 1-D seed: measured in the
#    first round) is cut at its deadline (--slow-factor x the original's measurement, at least 2 s) and pruned,
#    not waited for; the run goes on, finds the optimum and ends long before the slow answer (issue 21).
t0=$(date +%s)
FAKE_GPU_SLOW="BLOCK=2048:60" FAKE_NCU_CSV=$src/tests/profile/data/small_grid.csv "$kiln" optimize "$src/examples/softmax" \
  --python "$py" --ncu "$ncu" --budget-seconds 20 --hard-end-seconds 50 --no-db --json "$tmp/S.json" -q \
  >"$tmp/out6" 2>"$tmp/err6"
rc=$?
took=$(( $(date +%s) - t0 ))
if [ $rc -ne 0 ]; then
  bad "slow candidate: exit $rc"; cat "$tmp/out6" "$tmp/err6"
else
  [ "$(json "$tmp/S.json" "j['cut_slow'] >= 1")" = True ] || bad "slow candidate: not cut ($(json "$tmp/S.json" "[(c['config'], c['verdict'], c['message']) for c in j['candidates']]"))"
  [ "$(json "$tmp/S.json" "any(c['config'].get('BLOCK') == 2048 and c['verdict'] == 'pruned' and 'too slow' in c['message'] for c in j['candidates'])")" = True ] ||
    bad "slow candidate: BLOCK=2048 not pruned as too slow"
  [ "$(json "$tmp/S.json" "j['improved'] and j['best_config']['BLOCK'] == 1024")" = True ] || bad "slow candidate: the optimum was not found"
  [ "$(json "$tmp/S.json" "j['timings_s']['budget_scope']")" = search ] || bad "slow candidate: budget scope is not search by default"
  [ "$took" -lt 45 ] || bad "slow candidate: the run took $took s"
fi

[ $fail -eq 0 ] && say "ok"
exit $fail
