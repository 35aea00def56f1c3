"""Bench file for examples/softmax/softmax.py (kiln task format, see docs/task-format.md)."""
import torch

# name -> parameters; each case's inputs come from inputs() with the RNG seeded by the worker.
CASES = {
    "small": {"rows": 1024, "cols": 512, "dtype": "float32"},
    "wide": {"rows": 4096, "cols": 4096, "dtype": "float32"},
    "fp16": {"rows": 8192, "cols": 2048, "dtype": "float16"},
}
# Small cases for Triton's interpreter (CPU, no GPU): used instead of CASES there.
INTERPRET_CASES = {
    "tiny": {"rows": 8, "cols": 100, "dtype": "float32"},
    "tiny_fp16": {"rows": 4, "cols": 130, "dtype": "float16"},
}


def inputs(case, device):
    x = torch.randn(case["rows"], case["cols"], device=device, dtype=getattr(torch, case["dtype"]))
    return (x,)


def reference(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def bytes_moved(case, x):
    return 2 * x.numel() * x.element_size()   # ideal: read once, write once


def flops(case, x):
    return 5 * x.numel()
