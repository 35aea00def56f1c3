# Composed by kiln datagen (comp_77_00015): rms_norm, elu, center, softmax, flip
# families: normalization, activation, reduction, indexing; dtype: bfloat16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
features = 64


class Model(nn.Module):
    """rms_norm, elu, center, softmax, flip"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        x = F.elu(x)
        x = x - x.mean(dim=-1, keepdim=True)
        x = torch.softmax(x, dim=-1)
        x = torch.flip(x, dims=[-1])
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []
