# Composed by kiln datagen (comp_5_00001): l2_normalize, clamp
# families: normalization, elementwise; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 4
features = 16


class Model(nn.Module):
    """l2_normalize, clamp"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.normalize(x, dim=-1)
        x = torch.clamp(x, min=-1.08, max=1.08)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
