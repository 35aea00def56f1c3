"""Reason codes for CUDA faults (evaluate.classify_exception, compiled path). The same wild pointer gave
"an illegal memory access" on an H200 and "operation not supported on global/shared address space" on an
H100: both are a bad load or store, code illegal_memory_access; other CUDA errors stay cuda_error."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import evaluate  # noqa: E402
from kiln_worker import platform as plat  # noqa: E402


class AcceleratorError(RuntimeError):
    pass


def _code(msg, monkeypatch):
    monkeypatch.setattr(plat, "INTERPRET", False)
    return evaluate.classify_exception(AcceleratorError(msg))[0]


def test_bad_addresses_are_illegal_memory_access(monkeypatch):
    for msg in ("CUDA error: an illegal memory access was encountered",
                "CUDA error: operation not supported on global/shared address space",
                "CUDA error: misaligned address"):
        assert _code(msg, monkeypatch) == "illegal_memory_access", msg


def test_other_cuda_errors_stay_cuda_error(monkeypatch):
    assert _code("CUDA error: unspecified launch failure", monkeypatch) == "cuda_error"
