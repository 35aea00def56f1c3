#!/usr/bin/env python3
"""The argmax/argmin helpers kiln datagen writes for Inductor's `triton_helpers.maximum_with_index`,
`max_with_index` (and the min ones), as the golden candidates of KernelBench 51_Argmax and 52_Argmin hold them
(kiln_datagen_test checks that the conversion writes exactly those files): run under Triton's interpreter in a
looped row reduction shaped like Inductor's (per-lane state, masked tail, final tl.reduce), against
torch.argmax/argmin on rows with ties, NaNs, infinities and the extreme in the tail. The candidates themselves
are compiled for KernelBench's 8.6 GB input, too large for the interpreter.

usage: datagen_argmax_test.py   (runs itself with $KILN_PYTHON or .venv's python for torch and triton; exit 77
without them)
"""
import importlib.util
import os
import re
import sys
import tempfile

os.environ["TRITON_INTERPRET"] = "1"
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")

KERNEL = '''

@triton.jit
def rows_KIND(x_ptr, out_ptr, n_cols: tl.constexpr, R: tl.constexpr):
    row = tl.program_id(0)
    best = tl.full([1, R], INIT, tl.float32)
    best_index = tl.full([1, R], 2147483647, tl.int32)
    for off in tl.range(0, n_cols, R):
        index = off + tl.arange(0, R)[None, :]
        mask = index < n_cols
        value = tl.load(x_ptr + row * n_cols + index, mask, other=0.0)
        nxt, nxt_index = KIND_step(best, best_index, value, index)
        best = tl.where(mask, nxt, best)
        best_index = tl.where(mask, nxt_index, best_index)
    _, found = KIND_rows(best, best_index, 1)
    tl.store(out_ptr + row + tl.arange(0, 1), found)
'''


def helpers(golden, kind):
    """The helper functions of a golden candidate (every @triton.jit function before its first kernel comment)."""
    text = open(os.path.join(GOLDEN, golden)).read()
    start = text.index("@triton.jit\ndef " + kind + "_step(")
    end = text.index("\n# ", start)
    block = text[start:end]
    assert re.search(r"def " + kind + r"_rows\(", block), f"{golden}: no {kind}_rows helper"
    return block


def load(tmp, kind, source):
    init = 'float("-inf")' if kind == "argmax" else 'float("inf")'
    path = os.path.join(tmp, f"{kind}_helpers.py")
    with open(path, "w") as f:
        f.write("import triton\nimport triton.language as tl\n\n" + source
                + KERNEL.replace("KIND", kind).replace("INIT", init))
    spec = importlib.util.spec_from_file_location(f"{kind}_helpers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, f"rows_{kind}")


def rows():
    import torch
    g = torch.Generator().manual_seed(19)
    x = torch.randn(8, 37, generator=g)
    x[1] = 0.5                                          # all equal: the first index
    x[2, 5] = float("nan")                              # NaNs: the first NaN (largest and smallest)
    x[2, 20] = float("nan")
    x[3] = float("-inf")                                # all -inf
    x[4, 36] = 9.0                                      # the maximum in the masked tail
    x[4, 35] = -9.0                                     # and the minimum beside it
    x[5, 3] = x[5, 30] = 7.0                            # a tied maximum: the lower index
    x[5, 4] = x[5, 31] = -7.0                           # a tied minimum: the lower index
    x[6] = float("inf")                                 # all +inf
    x[7, 0] = float("nan")                              # a NaN first
    return x


def main():
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError:
        # the python with torch and triton: $KILN_PYTHON, else the checkout's .venv (as the other datagen tests)
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
        py = os.environ.get("KILN_PYTHON") or os.path.join(root, ".venv", "bin", "python3")
        if os.path.exists(py) and not os.environ.get("KILN_ARGMAX_TEST_REEXEC"):
            os.environ["KILN_ARGMAX_TEST_REEXEC"] = "1"
            os.execv(py, [py, os.path.abspath(__file__)])
        print("skip: no torch/triton")
        return 77
    import torch
    failures = 0
    x = rows()
    with tempfile.TemporaryDirectory() as tmp:
        for golden, kind, ref in (("kb_level1_51_Argmax_over_a_dimension.py", "argmax", torch.argmax),
                                  ("kb_level1_52_Argmin_over_a_dimension.py", "argmin", torch.argmin)):
            kernel = load(tmp, kind, helpers(golden, kind))
            want = ref(x, dim=1).to(torch.int32)
            for block in (8, 64):                       # several blocks with a masked tail; one block
                out = torch.full((x.shape[0],), -1, dtype=torch.int32)
                kernel[(x.shape[0],)](x, out, x.shape[1], R=block)
                ok = torch.equal(out, want)
                failures += not ok
                print(("ok    " if ok else "FAIL  ") + f"{kind} helpers, block {block}: {out.tolist()}"
                      + ("" if ok else f" (torch: {want.tolist()})"), flush=True)
    print(f"datagen_argmax: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
