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


def test_compile_error_message_names_the_line_and_the_cause():
    # Triton's CompilationError starts "at L:C:" and puts the cause last or in __cause__: the verdict's message
    # (and the feedback a model gets) must carry the source line and the cause, not "at 14:13:" alone.
    import ast
    from triton.compiler.errors import CompilationError
    src = "def k(x):\n    y = tl.arange(0, 3)\n    return y\n"
    node = ast.parse(src).body[0].body[0].value
    try:
        try:
            raise ValueError("arange's range must be a power of 2")
        except ValueError as v:
            raise CompilationError(src, node, None) from v
    except CompilationError as e:
        code, msg = evaluate.classify_exception(e)
    assert code == "triton_compile_error"
    assert msg == "CompilationError at 2:8: `y = tl.arange(0, 3)`: ValueError: arange's range must be a power of 2"
    code, msg = evaluate.classify_exception(CompilationError(src, node, "Unsupported dtype fp16"))
    assert msg.endswith("`y = tl.arange(0, 3)`: Unsupported dtype fp16"), msg
