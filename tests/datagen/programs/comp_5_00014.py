# Composed by kiln datagen (comp_5_00014): l2_normalize, transpose, bmm_self, abs_square, softmax
# families: normalization, indexing, matmul, elementwise; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 2
features = 16


class Model(nn.Module):
    """l2_normalize, transpose, bmm_self, abs_square, softmax"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.normalize(x, dim=-1)
        x = x.transpose(1, 2).contiguous()
        x = torch.bmm(x, x.transpose(1, 2)) / 2
        x = x * x.abs()
        x = torch.softmax(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
