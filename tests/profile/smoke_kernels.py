#!/usr/bin/env python3
"""Runs every recording kernel (tests/profile/kernels/[a-z]*.py) under Triton's interpreter at tiny sizes
(KILN_SMOKE=1), each as __main__ in a child forked after torch and triton are imported once
(tests/forked.py; 300 s each). Prints each kernel's last line, or FAIL and its last 5 lines; exit 1 when
any failed, 77 without torch/triton."""
import glob
import os
import runpy
import sys

os.environ["KILN_SMOKE"] = "1"
os.environ["TRITON_INTERPRET"] = "1"
HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, KERNELS)
from forked import run_forked  # noqa: E402  (tests/forked.py)

try:
    import torch  # noqa: F401
    import triton  # noqa: F401
except Exception:  # noqa: BLE001
    print(f"no python with torch+triton ({sys.executable}): skip")
    sys.exit(77)


def run_kernel(path):
    runpy.run_path(path, run_name="__main__")


def main():
    rc = 0
    for path in sorted(glob.glob(os.path.join(KERNELS, "[a-z]*.py"))):
        code, out = run_forked(lambda: run_kernel(path))
        lines = out.splitlines()
        if code != 0:
            print(f"FAIL {path} (exit {code})")
            print("\n".join(lines[-5:]))
            rc = 1
        else:
            print(lines[-1] if lines else "")
    return rc


if __name__ == "__main__":
    sys.exit(main())
