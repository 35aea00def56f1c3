# Composed by kiln datagen (comp_13_00020): leaky_relu, silu, silu
# families: activation; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 64


class Model(nn.Module):
    """leaky_relu, silu, silu"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.leaky_relu(x, negative_slope=0.1)
        x = F.silu(x)
        x = F.silu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
