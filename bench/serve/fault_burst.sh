#!/bin/sh
# The 1000-request version of tests/serve/fault_test.py (kiln serve under Triton's interpreter on
# loopback: a tenth of the requests are real evaluations, the rest decided by the format rules;
# workers SIGKILLed twice mid-run, the server restarted once on its journal).
#   bench/serve/fault_burst.sh [build/release/kiln]
set -e
cd "$(dirname "$0")/../.."
# 100 real evaluations on 2 interpreter workers: answers may take minutes on a busy machine (KILN_SERVE_FAULT_ANSWER_S).
KILN_PYTHON=${KILN_PYTHON:-$PWD/.venv/bin/python3} KILN_SERVE_FAULT_REQUESTS=${KILN_SERVE_FAULT_REQUESTS:-1000} \
  KILN_SERVE_FAULT_ANSWER_S=${KILN_SERVE_FAULT_ANSWER_S:-900} \
  exec python3 tests/serve/fault_test.py "${1:-build/release/kiln}"
