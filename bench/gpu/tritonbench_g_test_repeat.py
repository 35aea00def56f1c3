#!/usr/bin/env python3
"""Does a TritonBench-G gold file's own test give the same results twice? A plain check, outside kiln.

    python3 bench/gpu/tritonbench_g_test_repeat.py [--corpus DIR] NAME

The gold file (module and test part) runs twice in this process as a script would (`__name__ ==
"__main__"`), each time in a fresh namespace with torch seeded the same (so both runs draw the same
inputs), the caching allocator's free memory filled with NaN before the first run and with 1500.0 before the
second (a kernel that reads memory nobody wrote then gives different results). The two runs' `result_gold`
(TritonBench's test results) are compared. Printed: `same`, `differs` (which results, how many elements) or
`fault` (the exception, e.g. an illegal memory access). One module per process: a fault can lose the CUDA
context. No kiln code: torch, triton and the corpus only (the flood and comparison of
tritonbench_g_self_repeat.py).
"""
import argparse
import os
import sys
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tritonbench_g_self_repeat import clone, diff, flood  # noqa: E402


def run_once(path, value):
    flood(value)
    torch.manual_seed(1234)
    torch.cuda.manual_seed_all(1234)
    ns = {"__name__": "__main__", "__file__": path}
    exec(compile(open(path).read(), path, "exec"), ns)
    torch.cuda.synchronize()
    return clone(ns.get("result_gold"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("KILN_CORPUS_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "corpus"))
    ap.add_argument("name")
    a = ap.parse_args()
    path = os.path.join(a.corpus, "tritonbench", "G", "kernels", a.name + ".py")
    try:
        first = run_once(path, float("nan"))
        second = run_once(path, 1500.0)
    except Exception as e:  # noqa: BLE001 - a fault is the answer
        tb = traceback.extract_tb(e.__traceback__)
        at = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
        print(f"{a.name}: fault {type(e).__name__}: {str(e)[:200]}{at}", flush=True)
        return 1
    if first is None:
        print(f"{a.name}: no result_gold", flush=True)
        return 1
    d = diff(first, second)
    print(f"{a.name}: {'differs ' + d if d else 'same'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
