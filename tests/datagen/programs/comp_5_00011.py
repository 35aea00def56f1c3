# Composed by kiln datagen (comp_5_00011): gelu, stride_slice, log_softmax, logsumexp
# families: activation, indexing, normalization, reduction; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
features = 64


class Model(nn.Module):
    """gelu, stride_slice, log_softmax, logsumexp"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.gelu(x)
        x = x[..., ::2]
        x = F.log_softmax(x, dim=-1)
        x = torch.logsumexp(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
