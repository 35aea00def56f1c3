# Composed by kiln datagen (comp_13_00009): silu, scale_parameter, silu, softmax, matmul_input
# families: activation, elementwise, normalization, matmul; dtype: float16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 64


class Model(nn.Module):
    """silu, scale_parameter, silu, softmax, matmul_input"""

    def __init__(self):
        super().__init__()
        self.scale0 = nn.Parameter(torch.randn(64, dtype=torch.float16) * 0.1 + 1.0)

    def forward(self, x, w1):
        x = F.silu(x)
        x = x * self.scale0
        x = F.silu(x)
        x = torch.softmax(x, dim=-1)
        x = torch.matmul(x, w1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float16)
    w1 = torch.randn(64, 256, dtype=torch.float16) / 8
    return [x, w1]


def get_init_inputs():
    return []
