# Composed by kiln datagen (comp_5_00010): gelu, stride_slice
# families: activation, indexing; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
features = 64


class Model(nn.Module):
    """gelu, stride_slice"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.gelu(x)
        x = x[..., ::2]
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
