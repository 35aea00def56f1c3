# Composed by kiln datagen (comp_5_00007): clamp, gelu, log_softmax, logsumexp
# families: elementwise, activation, normalization, reduction; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
features = 16


class Model(nn.Module):
    """clamp, gelu, log_softmax, logsumexp"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = torch.clamp(x, min=-1.13, max=1.13)
        x = F.gelu(x)
        x = F.log_softmax(x, dim=-1)
        x = torch.logsumexp(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
