# Sourced by the GPU-session scripts: the environment for running a carried kiln on a GPU host.
# The repo tree travels; binaries built on the development machine and the corpus come in
# .device-carry/ (ignored by git): .device-carry/bin/{kiln,kiln_rewrite_apply}, .device-carry/corpus.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export KILN_BIN=${KILN_BIN:-$root/.device-carry/bin/kiln}
export KILN=$KILN_BIN
export KILN_WORKER_DIR=$root/worker
export KILN_PYTHON=${KILN_PYTHON:-python3}
export KILN_CORPUS_DIR=${KILN_CORPUS_DIR:-$root/.device-carry/corpus}
export PYTHONUNBUFFERED=1
# Tests and scripts that look for the corpus beside the repository.
if [[ ! -e $root/../shared/corpus ]]; then mkdir -p "$root/../shared" && ln -sfn "$KILN_CORPUS_DIR" "$root/../shared/corpus"; fi
export OUT=${OUT:-/tmp/kiln-out}
mkdir -p "$OUT"
