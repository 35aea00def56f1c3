# Composed by kiln datagen (comp_13_00029): cumsum, scale_parameter, hardswish
# families: reduction, elementwise, activation; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
features = 64


class Model(nn.Module):
    """cumsum, scale_parameter, hardswish"""

    def __init__(self):
        super().__init__()
        self.scale0 = nn.Parameter(torch.randn(64, dtype=torch.float32) * 0.1 + 1.0)

    def forward(self, x):
        x = torch.cumsum(x, dim=-1)
        x = x * self.scale0
        x = F.hardswish(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
