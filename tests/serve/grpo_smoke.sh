#!/bin/sh
# CTest serve_grpo_smoke: bench/serve/grpo_smoke.py (TRL's GRPOTrainer against a real kiln serve) with
# $KILN_GRPO_PYTHON, else $KILN_PYTHON, else python3; skipped (77) when that python has no trl
# (docs/serve.md, "GRPO smoke run", says how to make a venv with it). Usage: grpo_smoke.sh KILN
py=${KILN_GRPO_PYTHON:-${KILN_PYTHON:-python3}}
exec "$py" bench/serve/grpo_smoke.py --kiln "$1" --steps 6 --expect-learning
