# Composed by kiln datagen (comp_1_00013): stride_slice, softmax, clamp, l1_scale, cumsum
# families: indexing, normalization, elementwise, reduction; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 256


class Model(nn.Module):
    """stride_slice, softmax, clamp, l1_scale, cumsum"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x[..., ::2]
        x = torch.softmax(x, dim=-1)
        x = torch.clamp(x, min=-0.702, max=0.702)
        x = x / (x.abs().sum(dim=-1, keepdim=True) + 1e-3)
        x = torch.cumsum(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
