# Composed by kiln datagen (comp_5_00013): log_softmax, l2_normalize, abs_square, softmax
# families: normalization, elementwise; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
features = 16


class Model(nn.Module):
    """log_softmax, l2_normalize, abs_square, softmax"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = F.log_softmax(x, dim=-1)
        x = F.normalize(x, dim=-1)
        x = x * x.abs()
        x = torch.softmax(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
