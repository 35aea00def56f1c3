#!/usr/bin/env bash
# Runs every test: sets up first if needed (idempotent), then the C++ tests (unit, golden,
# end-to-end, interpreter and replay) through CTest. Tests labelled "gpu" skip cleanly without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
export KILN_PYTHON="$root/.venv/bin/python3"
ctest --preset release -j"$(nproc)" "$@"
