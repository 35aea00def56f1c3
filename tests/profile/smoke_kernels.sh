#!/usr/bin/env bash
# Runs every recording kernel (tests/profile/kernels/*.py) under Triton's interpreter at tiny sizes:
# smoke_kernels.py under $KILN_PYTHON (torch and triton imported once, a forked child per kernel).
exec "${KILN_PYTHON:-python3}" "$(dirname "$0")/smoke_kernels.py"
