# Composed by kiln datagen (comp_13_00025): sigmoid, permute_gather, mish
# families: activation, indexing; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 1024


class Model(nn.Module):
    """sigmoid, permute_gather, mish"""

    def __init__(self):
        super().__init__()
        self.register_buffer("perm0", (torch.arange(1024) * 7) % 1024)

    def forward(self, x):
        x = torch.sigmoid(x)
        x = torch.index_select(x, -1, self.perm0)
        x = F.mish(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
