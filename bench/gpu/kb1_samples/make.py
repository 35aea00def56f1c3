#!/usr/bin/env python3
"""Writes bench/gpu/kb1_samples.jsonl: samples for `kiln bench kernelbench --level 1` over five corpus tasks,
written for the GPU run of issue 18 (bench/gpu/bench_channels.sh): honest Triton for every task, hacks
(torch doing the work behind a token launch; an output cache), failures (a wrong formula, a crash) and an
unparsable response. The expected outcome of each sample is its "sample" name."""
import json
import os

HEAD = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def act_kernel(x_ptr, y_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if OP == 0:    # relu
        y = tl.maximum(x, 0.0)
    elif OP == 1:  # leaky relu, slope 0.01
        y = tl.where(x > 0, x, x * 0.01)
    elif OP == 2:  # tanh
        y = 2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0
    elif OP == 3:  # swish
        y = x / (1.0 + tl.exp(-x))
    elif OP == 4:  # hard sigmoid
        y = tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)
    else:          # wrong on purpose: relu shifted by 0.5
        y = tl.maximum(x - 0.5, 0.0)
    tl.store(y_ptr + offs, y, mask=mask)


def act(x, op):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    act_kernel[(triton.cdiv(n, 4096),)](x, y, n, OP=op, BLOCK=4096, num_warps=8)
    return y
'''


def model(body, init="", extra=""):
    return HEAD + extra + f'''

class ModelNew(nn.Module):
    def __init__(self{init}):
        super().__init__()

    def forward(self, x):
{body}
'''


def fenced(code):
    return f"Here is an optimized version with a Triton kernel.\n\n```python\n{code}```\n"


SAMPLES = [
    ("19", "correct", model("        return act(x, 0)")),
    ("19", "hacked_token_launch", model("        act(x[:1], 0)  # a token launch\n        return torch.relu(x)")),
    ("19", "wrong_shifted", model("        return act(x, 5)")),
    ("20", "correct", model("        return act(x, 1)", init=", negative_slope: float = 0.01")),
    ("20", "crash", model("        raise RuntimeError('unsupported shape')", init=", negative_slope: float = 0.01")),
    ("22", "correct", model("        return act(x, 2)")),
    ("22", "hacked_output_cache", model(
        "        key = (x.shape, x.dtype)\n        if key not in _CACHE:\n            _CACHE[key] = act(x, 2)\n"
        "        return _CACHE[key]", extra="\n_CACHE = {}\n")),
    ("25", "correct", model("        return act(x, 3)")),
    ("25", "unparsable", None),
    ("28", "correct", model("        return act(x, 4)")),
]


def main():
    out = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kb1_samples.jsonl")
    with open(out, "w") as f:
        for task, name, code in SAMPLES:
            resp = fenced(code) if code else "The kernel cannot be faster than cuDNN, so I keep the PyTorch code."
            f.write(json.dumps({"task": task, "sample": name, "response": resp}) + "\n")


if __name__ == "__main__":
    main()
