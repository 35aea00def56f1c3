# kiln test task (KernelBench format): ReLU whose reference writes its last 4 columns like a race between
# writers: on each call, element e of those columns is 1 where (call + e) % 4 == 0, else 0. Two calls agree
# on half of them, so only four runs show every racing element (TritonBench-G's index_select_bwd changed
# 256-352 of its 512 racing elements from one run to the next on an H100). Used by
# tests/worker/test_reference_instability.py.
import itertools

import torch
import torch.nn as nn

_calls = itertools.count()


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(x)
        k = next(_calls)
        e = torch.arange(x.shape[0] * 4, device=x.device).reshape(x.shape[0], 4)
        out[:, -4:] = ((k + e) % 4 == 0).to(x.dtype)
        return out


batch_size = 8
dim = 64


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
