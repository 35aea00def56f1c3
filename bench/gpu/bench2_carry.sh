#!/usr/bin/env bash
# Assembles the carried tree of bench/gpu/bench2_gpu.sh from this checkout: DEST/{bin,worker,tests/bench,
# tests/bench_samples,bench/gpu,corpus}. The kiln binary is build/release/kiln with the shared libraries it needs
# beside it (the GPU host lacks cpp-httplib and brotli); the corpus comes from $KILN_CORPUS_DIR or ../shared/corpus.
# Usage: bash bench/gpu/bench2_carry.sh DEST   (then: run with carry DEST, `bash DEST/bench/gpu/bench2_gpu.sh STEP...`)
set -eu
dest=${1:?usage: bench2_carry.sh DEST}
src=$(cd "$(dirname "$0")/../.." && pwd)
corpus=${KILN_CORPUS_DIR:-$src/../shared/corpus}
kiln=$src/build/release/kiln
[ -x "$kiln" ] && [ -d "$corpus/tritonbench" ] || { echo "need $kiln and $corpus/tritonbench" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest"/{bin,bench/gpu,tests}
cp "$kiln" "$dest/bin/"
ldd "$kiln" | awk '/libcpp-httplib|libbrotli/ {print $3}' | xargs -r cp -L -t "$dest/bin/"
for f in lib.sh session_env.sh bench2_gpu.sh bench_channels.sh session9_lead_check.sh bench_nonok.py kb1_samples.jsonl \
         tritonbench_g_self_repeat.py tritonbench_g_test_repeat.py autotune_compile_probe.py; do
  cp "$src/bench/gpu/$f" "$dest/bench/gpu/"
done
cp -r "$src/worker" "$dest/worker"
cp -r "$src/tests/bench" "$src/tests/bench_samples" "$dest/tests/"
cp -rL "$corpus" "$dest/corpus"
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$dest"
