"""What the datagen end-to-end tests share (datagen_cli_test.py, datagen_llm_test.py): paths, the Python with
torch and triton, check() and its failure list, JSON lines, and main()'s skip / temporary folder / exit code."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "datagen")
KILN = sys.argv[1] if len(sys.argv) > 1 else ""
PY = os.environ.get("KILN_PYTHON") or os.path.join(ROOT, ".venv", "bin", "python3")
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def main(name, tests):
    """Runs each test(tmp) in one temporary folder: 77 (skipped) without torch and triton in PY, else 1 when a
    check failed."""
    if not KILN:
        print(f"usage: {name}_test.py KILN")
        return 2
    try:
        subprocess.run([PY, "-c", "import torch, triton"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        print(f"skip: no torch/triton in {PY}")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        for t in tests:
            t(tmp)
    print(f"{name}: {len(failures)} failed")
    return 1 if failures else 0
