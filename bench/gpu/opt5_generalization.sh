#!/usr/bin/env bash
# Session 12 (issue 21, branch wip/opt5): the generalization suite with tuple-assigned block sizes reachable
# (`i_v, i_k = tl.program_id(0), tl.program_id(1)` in the kernel, `BK, BV = min(K, 32), min(V, 32)` in the
# wrapper), from a carried tree ROOT = .device-carry/opt5 (bin/kiln + its libs, worker/, bench/,
# corpus/tritonbench/G). Session 10's settings (opt3_generalization.sh: 20 s of search, HARD_END 90 s per
# module, @largest:3, ncu on) with a wall limit of 200 s; its own suite folder and tarball:
#   bash ROOT/bench/gpu/opt5_generalization.sh "dev:17:1 dev:23:1"
# Session 12 ran it with HARD_END 55 (BUDGET 15, WALL_LIMIT 125) to fit a 250 s share: too short. The
# recurrent kernels' fixed costs before the search are 26-37 s (the ncu profile 13-19 s), so the hard end
# cut fused_recurrent_retention's search before it started and fused_recurrent_delta's verification. The
# inputs check before the first module takes about 9 s: a module starts only when 9 + BUDGET + GRACE
# (GRACE = HARD_END - BUDGET + 10) fits in WALL_LIMIT.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export HARD_END=${HARD_END:-90} WALL_LIMIT=${WALL_LIMIT:-200}
export KILN_SUITE_DIR=${KILN_SUITE_DIR:-/tmp/opt5_gen}
exec bash "$here/opt3_generalization.sh" "$@"
