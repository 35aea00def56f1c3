# Composed by kiln datagen (comp_5_00015): transpose, bmm_self
# families: indexing, matmul; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 4
features = 64


class Model(nn.Module):
    """transpose, bmm_self"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.transpose(1, 2).contiguous()
        x = torch.bmm(x, x.transpose(1, 2)) / 4
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
