#!/usr/bin/env bash
# Session 11 (issue 21, branch wip/opt4): the generalization suite, continuing the split's sha256 order,
# with the diagnosis's source rewrites proposed (app::RewriteProposer: persistent grid, split-K), from a
# carried tree ROOT = .device-carry/opt4 (bin/kiln + its libs, worker/, bench/, corpus/tritonbench/G).
# The settings of session 10 (opt3_generalization.sh: BUDGET 20 s of search, HARD_END 90 s per module,
# --slow-factor 5 by default, @largest:3, ncu on), its own suite folder and tarball:
#   bash ROOT/bench/gpu/opt4_generalization.sh "dev:16:2 held:9:1 ..."
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export KILN_SUITE_DIR=${KILN_SUITE_DIR:-/tmp/opt4_gen}
exec bash "$here/opt3_generalization.sh" "$@"
