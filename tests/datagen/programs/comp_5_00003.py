# Composed by kiln datagen (comp_5_00003): hardswish, layer_norm, leaky_relu
# families: activation, normalization; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 2
features = 64


class Model(nn.Module):
    """hardswish, layer_norm, leaky_relu"""

    def __init__(self):
        super().__init__()
        self.norm0 = nn.LayerNorm(64, dtype=torch.float32)

    def forward(self, x):
        x = F.hardswish(x)
        x = self.norm0(x)
        x = F.leaky_relu(x, negative_slope=0.1)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
