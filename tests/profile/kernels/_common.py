"""Shared harness for the profiling test kernels (tests/profile/kernels/*.py).

Convention (the same one the kiln worker follows in profile mode): run the call once to warm up
(compile, autotune), synchronize, then run it again inside the NVTX range "kiln_profile", which
`kiln profile` selects with `ncu --nvtx --nvtx-include kiln_profile/`. Compile facts of the kernels
launched in the profiled call go to $KILN_FACTS_OUT as {"kernels": [...]}.

KILN_SMOKE=1 (or no GPU): tiny sizes under Triton's interpreter, for a CPU smoke test.
"""
import contextlib
import json
import os
import sys

SMOKE = os.environ.get("KILN_SMOKE") == "1"
if SMOKE:
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

DEVICE = "cpu" if SMOKE or not torch.cuda.is_available() else "cuda"
if DEVICE == "cpu" and not SMOKE:
    print("no GPU: run with KILN_SMOKE=1 for a CPU smoke test", file=sys.stderr)
    sys.exit(77)


def size(gpu, smoke):
    return smoke if SMOKE else gpu


def sm_count():
    if DEVICE == "cuda":
        return torch.cuda.get_device_properties(0).multi_processor_count
    return 4


@contextlib.contextmanager
def _range(name):
    if DEVICE == "cuda":
        torch.cuda.nvtx.range_push(name)
        try:
            yield
        finally:
            torch.cuda.nvtx.range_pop()
    else:
        yield


def _sync():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def _facts(handle, fallback_name):
    if handle is None or isinstance(handle, (list, tuple)) and not handle:
        return []
    handles = handle if isinstance(handle, (list, tuple)) else [handle]
    out = []
    for h in handles:
        md = getattr(h, "metadata", None)
        f = {"name": getattr(h, "name", None) or getattr(md, "name", None) or fallback_name}
        for key, val in (("n_regs", getattr(h, "n_regs", None)), ("n_spills", getattr(h, "n_spills", None)),
                         ("shared_bytes", getattr(md, "shared", None)), ("num_warps", getattr(md, "num_warps", None)),
                         ("num_stages", getattr(md, "num_stages", None))):
            if isinstance(val, int):
                f[key] = val
        out.append(f)
    return out


def run_profiled(call, name, check=None):
    """call() launches the kernel(s) and returns the launch handle(s); check() verifies results."""
    call()
    _sync()
    with _range("kiln_profile"):
        handle = call()
        _sync()
    if check is not None:
        check()
    path = os.environ.get("KILN_FACTS_OUT")
    if path:
        with open(path, "w") as f:
            json.dump({"kernels": _facts(handle, name)}, f, indent=2)
    print(f"{name}: ok ({DEVICE})")
