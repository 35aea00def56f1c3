# Composed by kiln datagen (comp_13_00006): softmax, subtract_max, elu, silu, scale_parameter
# families: normalization, reduction, activation, elementwise; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 1024


class Model(nn.Module):
    """softmax, subtract_max, elu, silu, scale_parameter"""

    def __init__(self):
        super().__init__()
        self.scale0 = nn.Parameter(torch.randn(1024, dtype=torch.float32) * 0.1 + 1.0)

    def forward(self, x):
        x = torch.softmax(x, dim=-1)
        x = x - x.amax(dim=-1, keepdim=True)
        x = F.elu(x)
        x = F.silu(x)
        x = x * self.scale0
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
