# Composed by kiln datagen (comp_5_00009): relu, gelu, stride_slice
# families: activation, indexing; dtype: float16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
features = 32


class Model(nn.Module):
    """relu, gelu, stride_slice"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = torch.relu(x)
        x = F.gelu(x)
        x = x[..., ::2]
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
