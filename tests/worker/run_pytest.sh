#!/usr/bin/env sh
# Runs the worker's pytest suite with $KILN_PYTHON (the venv with torch + triton), else <repo>/.venv.
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${KILN_PYTHON:-$root/.venv/bin/python3}
export KILN_CORPUS_DIR=${KILN_CORPUS_DIR:-$root/../shared/corpus}
cd "$root" && exec "$py" -m pytest -q -p no:cacheprovider "$root/tests/worker" "$@"
