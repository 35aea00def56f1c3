#!/usr/bin/env bash
# Session 10 (issue 21, branch wip/opt3): the generalization suite with the search's own budget
# (--budget-scope search, kiln's default now), a hard end per module and slow candidates cut, from a carried
# tree ROOT = .device-carry/opt3 (bin/kiln + its libs, worker/, bench/, corpus/tritonbench/G). Runs
# opt2_generalization.sh (inputs checked first, modules in the split's order, a table last, logs tarred into
# $OUT/opt3_gen.tar.gz) with these defaults:
#   BUDGET 20 (the search's seconds), HARD_END 90 (kiln optimize --hard-end-seconds: the whole module),
#   GRACE = HARD_END - BUDGET + 10 (the suite's own kill, after kiln's hard end), WALL_LIMIT 540.
#   bash ROOT/bench/gpu/opt3_generalization.sh "dev:7:1 held:4:1"
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export BUDGET=${BUDGET:-20}
HARD_END=${HARD_END:-90}
export GRACE=${GRACE:-$((HARD_END - BUDGET + 10))}
export OPTIMIZE_FLAGS="--hard-end-seconds $HARD_END ${OPTIMIZE_FLAGS:-}"
export KILN_SUITE_DIR=${KILN_SUITE_DIR:-/tmp/opt3_gen}
exec bash "$here/opt2_generalization.sh" "$@"
