# Composed by kiln datagen (comp_13_00008): elu, silu
# families: activation; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
features = 256


class Model(nn.Module):
    """elu, silu"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.elu(x)
        x = F.silu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
