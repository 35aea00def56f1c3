# kiln test task (KernelBench format): ReLU whose reference fills its last 4 columns from memory it never
# wrote (torch.empty, NaN turned to 0): the same in two runs with unwritten memory as NaN, different once that
# memory holds finite values. Stands in for TritonBench-G tests that read past their buffers. Used by
# tests/worker/test_reference_instability.py.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(x)
        junk = torch.empty(x.shape[0], 4, device=x.device, dtype=x.dtype)
        out[:, -4:] = torch.nan_to_num(junk, nan=0.0)
        return out


batch_size = 8
dim = 64


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
