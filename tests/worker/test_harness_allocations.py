"""Allocations made by the task's harness (TritonBench's test_* code below the separator, KernelBench's
get_inputs / get_init_inputs, a kiln bench file's input code): integer and bool tensors from torch.empty* are
zero-filled, floats keep the NaN poison; allocations made by module / candidate code keep the full poisoning
(seen on an H200: context_attn_llama's test indexes with a torch.empty int32 table, and the int sentinel made
every index an illegal address)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import guards  # noqa: E402

from workerproc import CANDIDATES, codes  # noqa: E402

_SRC = '''
import torch

def module_alloc(n):
    return torch.empty(n, dtype=torch.int32)

SEPARATOR = 1

def harness(n):
    ints = torch.empty(n, dtype=torch.int32)
    longs = torch.empty((n,), dtype=torch.int64).new_empty((n,))
    flags = torch.empty_like(torch.ones(n, dtype=torch.bool))
    floats = torch.empty(n, dtype=torch.float32)
    nested = (lambda: torch.empty(n, dtype=torch.int16))()
    return ints, longs, flags, floats, nested, module_alloc(n)
'''


def test_harness_ints_are_zeroed_module_ints_poisoned():
    code = compile(_SRC, "/tmp/kiln_harness_test.py", "exec")
    ns = {}
    exec(code, ns)
    guards.register_harness(code, after_line=_SRC[:_SRC.index("SEPARATOR")].count("\n") + 1)
    try:
        with guards.OpRecorder(poison=True):
            ints, longs, flags, floats, nested, module_ints = ns["harness"](64)
            direct = ns["module_alloc"](64)
    finally:
        guards.HARNESS_CODE.clear()
    for t in (ints, longs, nested):
        assert int(t.abs().sum()) == 0, t
    assert not bool(flags.any())
    assert bool(guards.is_poison(floats).all())              # floats keep the NaN payload
    for t in (module_ints, direct):                          # code above the separator: the sentinel
        assert bool((t == -0x5A5A5A5).all()), t
    # without registration the harness' ints get the sentinel too (what failed context_attn_llama)
    with guards.OpRecorder(poison=True):
        ints = ns["harness"](64)[0]
    assert bool((ints == -0x5A5A5A5).all())


def _tbg(worker, candidate=None):
    path = os.path.join(CANDIDATES, "tasks", "tbg_index_table.py")
    return worker.request({"op": "eval", "task": {"format": "tritonbench_g", "name": "tbg_index_table",
                                                   "path": path},
                           "candidate": candidate, "mode": "check", "trials": 2, "limits": {"timeout_s": 60}},
                          timeout=120)


def test_tritonbench_index_table_from_torch_empty(fork_worker):
    r = _tbg(fork_worker)
    assert r["verdict"] == "ok", (r.get("reasons"), r.get("stderr_tail", "")[-800:])


def test_candidate_allocations_stay_poisoned(fork_worker):
    """A candidate that leaves its output unwritten is still caught on a TritonBench task (its `gather` is
    called from the harness, but the allocation is the candidate's)."""
    src = open(os.path.join(CANDIDATES, "tasks", "tbg_index_table.py")).read().split("#" * 146)[0]
    src = src.replace("    gather_kernel[(triton.cdiv(n, 64),)](x, idx, out, n, BLOCK=64)\n",
                      "    gather_kernel[(triton.cdiv(n, 64),)](x, idx, torch.empty_like(out), n, BLOCK=64)\n")
    r = _tbg(fork_worker, {"source": src, "name": "tbg_index_table.py"})
    assert r["verdict"] == "mismatch" and "uninitialized_output" in codes(r), r.get("reasons")
