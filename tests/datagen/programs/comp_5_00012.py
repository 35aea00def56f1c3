# Composed by kiln datagen (comp_5_00012): stride_slice, log_softmax, logsumexp
# families: indexing, normalization, reduction; dtype: float16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
features = 64


class Model(nn.Module):
    """stride_slice, log_softmax, logsumexp"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x[..., ::2]
        x = F.log_softmax(x, dim=-1)
        x = torch.logsumexp(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
