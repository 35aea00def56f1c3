"""Bench of tests/worker/data/scatter_race (kiln format): 128 rows scattered into 96 slots, the last 64 rows into
the first 16 slots again."""
import torch

CASES = {"race": {"n": 128}}
INTERPRET_CASES = {"race_small": {"n": 128}}


def inputs(case, device):
    n = case["n"]
    x = torch.randn(n, device=device)
    dest = torch.cat([torch.arange(n // 2), torch.arange(n // 2) % 16]).to(torch.int32).to(device)
    out = torch.zeros(96, device=device)
    return (x, dest, out)
