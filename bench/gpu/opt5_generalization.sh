#!/usr/bin/env bash
# Session 12 (issue 21, branch wip/opt5): the generalization suite with tuple-assigned block sizes reachable
# (`i_v, i_k = tl.program_id(0), tl.program_id(1)` in the kernel, `BK, BV = min(K, 32), min(V, 32)` in the
# wrapper), from a carried tree ROOT = .device-carry/opt5 (bin/kiln + its libs, worker/, bench/,
# corpus/tritonbench/G). Session 10's settings (opt3_generalization.sh: 20 s of search, @largest:3, ncu on)
# with a shorter hard end (HARD_END 65 s per module) and wall limit (WALL_LIMIT 140 s), to fit a 250 s
# device share; its own suite folder and tarball:
#   bash ROOT/bench/gpu/opt5_generalization.sh "dev:17:1 dev:23:1"
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export HARD_END=${HARD_END:-65} WALL_LIMIT=${WALL_LIMIT:-140}
export KILN_SUITE_DIR=${KILN_SUITE_DIR:-/tmp/opt5_gen}
exec bash "$here/opt3_generalization.sh" "$@"
