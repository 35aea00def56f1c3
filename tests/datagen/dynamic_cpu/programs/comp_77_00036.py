# Composed by kiln datagen (comp_77_00036): softplus, relu, roll, abs_square, cumsum
# families: activation, indexing, elementwise, reduction; dtype: float16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
features = 16


class Model(nn.Module):
    """softplus, relu, roll, abs_square, cumsum"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.softplus(x)
        x = torch.relu(x)
        x = torch.roll(x, shifts=2, dims=-1)
        x = x * x.abs()
        x = torch.cumsum(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
