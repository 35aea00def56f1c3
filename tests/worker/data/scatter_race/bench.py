"""Bench of tests/worker/data/scatter_race (kiln format): n rows scattered into n/2 + 32 slots, the last n/2 rows
into the first 16 slots again. On a GPU, far more programs than it holds at once (they start in order of their
ids; a few programs all run at once, and timing picks a race's winner); 128 rows under the interpreter."""
import torch

CASES = {"race": {"n": 1 << 22}}
INTERPRET_CASES = {"race_small": {"n": 128}}


def inputs(case, device):
    n = case["n"]
    x = torch.randn(n, device=device)
    dest = torch.cat([torch.arange(n // 2), torch.arange(n // 2) % 16]).to(torch.int32).to(device)
    out = torch.zeros(n // 2 + 32, device=device)
    return (x, dest, out)
