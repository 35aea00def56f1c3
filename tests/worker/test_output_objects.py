"""Outputs that could answer the comparison themselves: a torch.Tensor subclass whose __torch_function__
rewrites the comparison's operations, or an object whose __eq__/__ne__ agrees with anything where the
reference returns a plain value. Both were accepted before (a kernel writing zeros passed as ReLU)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import compare  # noqa: E402

from workerproc import CANDIDATES, codes, eval_request  # noqa: E402


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if getattr(func, "__name__", "") in ("sub", "__sub__") and isinstance(out, torch.Tensor):
            return torch.zeros(out.shape, dtype=out.dtype)
        return out


class AgreesWithAll:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False


def _code(cand, ref):
    try:
        compare.compare(cand, ref)
    except compare.Mismatch as m:
        return m.code
    return None


def test_tensor_subclass_is_refused():
    ref = torch.relu(torch.randn(64))
    assert _code(torch.zeros(64).as_subclass(Liar), ref) == "tensor_subclass"
    assert _code({"a": [torch.zeros(64).as_subclass(Liar)]}, {"a": [ref]}) == "tensor_subclass"


def test_parameter_and_plain_tensors_compare_normally():
    ref = torch.randn(8)
    assert _code(torch.nn.Parameter(ref.clone()), ref) is None
    assert _code(ref.clone(), ref) is None
    assert _code(torch.zeros(8), ref) == "value_mismatch"


def test_object_agreeing_with_everything_is_refused():
    assert _code({"loss": AgreesWithAll()}, {"loss": 1.25}) == "structure_mismatch"
    assert _code([AgreesWithAll()], ["ok"]) == "structure_mismatch"
    assert _code({"loss": 1.25}, {"loss": 1.25}) is None
    assert _code([torch.float16], [torch.float16]) is None


def test_zero_kernel_dressed_as_subclass_is_rejected(fork_worker):
    src = open(os.path.join(CANDIDATES, "honest", "relu_ok.py")).read()
    src = src.replace("import torch\n", "import torch\n\n\nclass Liar(torch.Tensor):\n"
                      "    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                      "        out = super().__torch_function__(func, types, args, kwargs or {})\n"
                      "        if getattr(func, '__name__', '') in ('sub', '__sub__') and isinstance(out, torch.Tensor):\n"
                      "            return torch.zeros(out.shape, dtype=out.dtype)\n"
                      "        return out\n", 1)
    head, _, tail = src.rpartition("        return out\n")   # the forward's return, not the Liar's
    src = head + "        return out.as_subclass(Liar)\n" + tail
    req = eval_request(os.path.join(CANDIDATES, "honest", "relu_ok.py"))
    req["candidate"] = {"source": src, "name": "liar.py"}
    r = fork_worker.request(req)
    assert r["verdict"] == "rejected" and "tensor_subclass" in codes(r), r
