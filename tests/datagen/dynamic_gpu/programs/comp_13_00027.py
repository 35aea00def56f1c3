# Composed by kiln datagen (comp_13_00027): mish, clamp, scale_parameter, hardswish, amin
# families: activation, elementwise, reduction; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 64


class Model(nn.Module):
    """mish, clamp, scale_parameter, hardswish, amin"""

    def __init__(self):
        super().__init__()
        self.scale0 = nn.Parameter(torch.randn(64, dtype=torch.float32) * 0.1 + 1.0)

    def forward(self, x):
        x = F.mish(x)
        x = torch.clamp(x, min=-1.44, max=1.44)
        x = x * self.scale0
        x = F.hardswish(x)
        x = torch.amin(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
