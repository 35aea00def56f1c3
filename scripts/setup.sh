#!/usr/bin/env bash
# One-command setup on a fresh Debian 12 machine: Debian packages, the tree-sitter Python grammar,
# the Python side (torch/triton pinned to the GPU machines' versions, in .venv), then configure and
# build the release preset. Safe to re-run: each step is skipped when already done.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

DEB_PACKAGES=(build-essential cmake ninja-build git python3 python3-venv python3-pip
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libsqlite3-dev libtree-sitter-dev
  libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev libxxhash-dev procps)
PY_PACKAGES=(torch==2.11.0 triton==3.6.0 numpy pytest)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

# Python: a virtual environment in .venv holds torch and triton for the worker (Triton's
# interpreter runs kernels on the CPU here). KILN_PYTHON points kiln at it.
if [[ ! -x .venv/bin/python3 ]] || ! .venv/bin/python3 -c 'import torch, triton, pytest' 2>/dev/null; then
  echo "== installing the Python side into .venv: ${PY_PACKAGES[*]}"
  python3 -m venv .venv
  pip=(.venv/bin/python3 -m pip install -q --no-cache-dir --disable-pip-version-check)
  "${pip[@]}" --upgrade pip
  # torch pulls about 3 GB of wheels that unpack to about 4.5 GB. One pip call would hold every
  # downloaded wheel on disk until the last is installed, and its cache would keep a second copy.
  # So resolve once (metadata only), then install the large wheels one at a time without a cache:
  # the peak is the installed tree plus one wheel.
  report=$(mktemp)
  "${pip[@]}" --dry-run --ignore-installed --report "$report" "${PY_PACKAGES[@]}"
  mapfile -t pins < <(python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["install"]:
    print(p["metadata"]["name"] + "==" + p["metadata"]["version"])' "$report")
  large=() small=()
  for p in "${pins[@]}"; do
    case "${p,,}" in torch==* | triton==* | nvidia-* | cuda-*) large+=("$p") ;; *) small+=("$p") ;; esac
  done
  rm -f "$report"
  echo "   ${#pins[@]} packages, $(df -h --output=avail . | tail -1 | tr -d ' ') free here"
  for p in "${large[@]}"; do "${pip[@]}" --no-deps "$p"; done
  "${pip[@]}" --no-deps "${small[@]}"
  .venv/bin/python3 -m pip check >/dev/null || { .venv/bin/python3 -m pip check; exit 1; }
fi

KILN_BOOTSTRAP_PYTHON=.venv/bin/python3 scripts/fetch_grammar.sh

echo "== building (release preset)"
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
echo "== kiln built at build/release/kiln"
