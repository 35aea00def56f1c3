# Composed by kiln datagen (comp_77_00009): stride_slice, gelu, center, sigmoid, rms_norm
# families: indexing, activation, reduction, normalization; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
features = 64


class Model(nn.Module):
    """stride_slice, gelu, center, sigmoid, rms_norm"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x[..., ::2]
        x = F.gelu(x)
        x = x - x.mean(dim=-1, keepdim=True)
        x = torch.sigmoid(x)
        x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
