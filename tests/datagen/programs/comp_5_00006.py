# Composed by kiln datagen (comp_5_00006): leaky_relu, clamp, gelu, stride_slice
# families: activation, elementwise, indexing; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
features = 64


class Model(nn.Module):
    """leaky_relu, clamp, gelu, stride_slice"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.leaky_relu(x, negative_slope=0.1)
        x = torch.clamp(x, min=-1.13, max=1.13)
        x = F.gelu(x)
        x = x[..., ::2]
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
