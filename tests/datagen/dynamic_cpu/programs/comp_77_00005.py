# Composed by kiln datagen (comp_77_00005): tanh, mul_scalar, stride_slice, transpose, gelu
# families: activation, elementwise, indexing; dtype: bfloat16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 4
features = 64


class Model(nn.Module):
    """tanh, mul_scalar, stride_slice, transpose, gelu"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = torch.tanh(x)
        x = x * 1.01
        x = x[..., ::2]
        x = x.transpose(1, 2).contiguous()
        x = F.gelu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []
