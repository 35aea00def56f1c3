# Inputs for kiln tasks whose entry is scale(x, alpha) = x * alpha: tests/rewrite/cases/literal_tiles.py
# (its 1024 is a literal tile size kiln optimize lifts to a constexpr parameter; issue 21) and
# tests/optimize/unrun/two_kernels.py (a forward that runs beside a backward that does not).
import torch

CASES = {"n1m": {"n": 1 << 20}}
INTERPRET_CASES = {"tiny": {"n": 3000}}


def inputs(case, device):
    return (torch.randn(case["n"], device=device), 0.5)


def reference(x, alpha):
    return x * alpha
