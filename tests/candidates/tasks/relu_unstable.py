# kiln test task (KernelBench format): ReLU whose reference does not determine its last 4 columns: they hold a
# value that changes from call to call (standing in for atomics, races, reads of memory the reference never
# wrote). Used by tests/worker/test_reference_instability.py. With dim <= 4 no element is stable.
import itertools

import torch
import torch.nn as nn

_calls = itertools.count(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(x)
        out[:, -4:] = float(next(_calls))
        return out


batch_size = 8
dim = 64


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
