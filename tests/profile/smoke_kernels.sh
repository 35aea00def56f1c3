#!/usr/bin/env bash
# Runs every recording kernel (tests/profile/kernels/*.py) under Triton's interpreter at tiny sizes.
set -u
py=${KILN_PYTHON:-python3}
"$py" -c "import torch, triton" 2>/dev/null || { echo "no python with torch+triton ($py): skip"; exit 77; }
dir=$(cd "$(dirname "$0")/kernels" && pwd)
rc=0
for f in "$dir"/[a-z]*.py; do
  if ! out=$(KILN_SMOKE=1 timeout 300 "$py" "$f" 2>&1); then
    echo "FAIL $f"; echo "$out" | tail -5; rc=1
  else
    echo "$out" | tail -1
  fi
done
exit $rc
