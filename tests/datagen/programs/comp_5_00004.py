# Composed by kiln datagen (comp_5_00004): layer_norm, leaky_relu, amax
# families: normalization, activation, reduction; dtype: bfloat16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 2
features = 64


class Model(nn.Module):
    """layer_norm, leaky_relu, amax"""

    def __init__(self):
        super().__init__()
        self.norm0 = nn.LayerNorm(64, dtype=torch.bfloat16)

    def forward(self, x):
        x = self.norm0(x)
        x = F.leaky_relu(x, negative_slope=0.1)
        x = torch.amax(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []
