# Composed by kiln datagen (comp_77_00008): stride_slice, transpose, gelu, center, sigmoid
# families: indexing, activation, reduction; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 4
features = 64


class Model(nn.Module):
    """stride_slice, transpose, gelu, center, sigmoid"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x[..., ::2]
        x = x.transpose(1, 2).contiguous()
        x = F.gelu(x)
        x = x - x.mean(dim=-1, keepdim=True)
        x = torch.sigmoid(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
