#!/bin/sh
# A fake Nsight Compute for tests/search: runs the profiled program (the fake worker's one-shot
# profile mode writes the compile facts) and prints a raw CSV recorded on an H200 ($FAKE_NCU_CSV).
# `ncu --version` answers like the real one.
if [ "$1" = "--version" ]; then
  echo "NVIDIA (R) Nsight Compute Command Line Profiler"
  echo "Version 2025.3.1.0 (build fake)"
  exit 0
fi
# Skip ncu's own options: the program starts at the first argument that is an existing file.
while [ $# -gt 0 ] && ! [ -f "$1" ]; do shift; done
if [ $# -gt 0 ]; then "$@" >/dev/null 2>&1 || exit $?; fi
cat "${FAKE_NCU_CSV:?FAKE_NCU_CSV is not set}"
