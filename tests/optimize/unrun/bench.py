# Inputs for two_kernels.py as a kiln task (entry `scale`: only the forward kernel runs).
import torch

CASES = {"n1m": {"n": 1 << 20}}
INTERPRET_CASES = {"tiny": {"n": 3000}}


def inputs(case, device):
    return (torch.randn(case["n"], device=device), 0.5)


def reference(x, alpha):
    return x * alpha
