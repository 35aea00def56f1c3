"""Verdicts and stable reason codes (docs/verdicts.md lists them with their meaning)."""
from __future__ import annotations

PRECEDENCE = ["rejected", "compile_error", "crash", "timeout", "runtime_error", "mismatch", "ok"]

# code -> (verdict under policy strict, verdict under policy trusted; None = warning only)
CODES = {
    # compile_error
    "syntax_error": ("compile_error", "compile_error"),
    "import_error": ("compile_error", "compile_error"),
    "missing_entry": ("compile_error", "compile_error"),
    "triton_compile_error": ("compile_error", "compile_error"),
    "out_of_resources": ("compile_error", "compile_error"),
    # runtime_error
    "exception": ("runtime_error", "runtime_error"),
    "out_of_memory": ("runtime_error", "runtime_error"),
    "illegal_memory_access": ("runtime_error", "runtime_error"),
    "cuda_error": ("runtime_error", "runtime_error"),
    "interpreter_error": ("runtime_error", "runtime_error"),
    # crash / timeout
    "signal": ("crash", "crash"),
    "sys_exit": ("crash", "crash"),
    "exit": ("crash", "crash"),
    "no_response": ("crash", "crash"),
    "timeout": ("timeout", "timeout"),
    # mismatch
    "structure_mismatch": ("mismatch", "mismatch"),
    "shape_mismatch": ("mismatch", "mismatch"),
    "dtype_mismatch": ("mismatch", "mismatch"),
    "device_mismatch": ("mismatch", "mismatch"),
    "nan_mismatch": ("mismatch", "mismatch"),
    "inf_mismatch": ("mismatch", "mismatch"),
    "value_mismatch": ("mismatch", "mismatch"),
    "uninitialized_output": ("mismatch", "mismatch"),
    "input_side_effect_mismatch": ("mismatch", "mismatch"),
    # rejected (policy): the candidate games the protocol
    "no_triton_launch": ("rejected", None),
    "torch_compute": ("rejected", None),
    "foreign_kernel": ("rejected", None),
    "reduced_precision": ("rejected", None),
    "swallowed_kernel_error": ("rejected", None),
    "reference_called": ("rejected", "mismatch"),
    "output_aliases_input": ("rejected", "mismatch"),
    "output_aliases_reference": ("rejected", "mismatch"),
    "cached_output": ("rejected", "mismatch"),
    "input_mutated": ("rejected", "mismatch"),
    "inputs_zeroed": ("rejected", "mismatch"),
    "foreign_stream": ("rejected", None),
    "patched_timer": ("rejected", None),
    "patched_torch": ("rejected", None),
    "patched_triton": ("rejected", None),
    "patched_builtins": ("rejected", None),
    "patched_worker": ("rejected", None),
    "introspection": ("rejected", None),
    "file_write": ("rejected", None),
    "process_spawn": ("rejected", None),
    "background_thread": ("rejected", None),
    "host_compute": ("rejected", None),
    "tensor_subclass": ("rejected", "mismatch"),
    "global_state": ("rejected", None),
    "timed_output_mismatch": ("rejected", "mismatch"),
    "network": ("rejected", None),
    "ctypes": ("rejected", None),
    "protocol_injection": ("rejected", None),
    "protocol_tamper": ("rejected", "crash"),
    # warnings only
    "excessive_speedup": (None, None),
    "torch_compute_partial": (None, None),
    "reduced_precision_allowed": (None, None),
    "clock_changed": (None, None),
    "timing_unavailable": (None, None),
}


def verdict_of(code: str, policy: str):
    strict, trusted = CODES.get(code, ("runtime_error", "runtime_error"))
    return strict if policy != "trusted" else trusted


class Reasons:
    def __init__(self, policy="strict"):
        self.policy = policy
        self.items = []

    def add(self, code, message, **extra):
        if any(r["code"] == code for r in self.items):
            return
        v = verdict_of(code, self.policy)
        r = {"code": code, "message": message, "severity": "error" if v else "warning"}
        r.update(extra)
        self.items.append(r)

    def has(self, code):
        return any(r["code"] == code for r in self.items)

    def verdict(self):
        best = "ok"
        for r in self.items:
            v = verdict_of(r["code"], self.policy)
            if v and PRECEDENCE.index(v) < PRECEDENCE.index(best):
                best = v
        return best

    def sorted(self):
        def key(r):
            v = verdict_of(r["code"], self.policy)
            return PRECEDENCE.index(v) if v else len(PRECEDENCE)
        return sorted(self.items, key=key)
