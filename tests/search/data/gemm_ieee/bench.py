"""Bench file for gemm.py (kiln task format, see docs/task-format.md)."""
import torch

CASES = {"square": {"n": 1024}}
INTERPRET_CASES = {"tiny": {"n": 64}}


def inputs(case, device):
    n = case["n"]
    return (torch.randn(n, n, device=device), torch.randn(n, n, device=device))


def reference(a, b):
    return a @ b


def flops(case, a, b):
    return 2 * case["n"] ** 3
