# Composed by kiln datagen (comp_13_00024): roll, permute_gather, mish, clamp
# families: indexing, activation, elementwise; dtype: float16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
features = 128


class Model(nn.Module):
    """roll, permute_gather, mish, clamp"""

    def __init__(self):
        super().__init__()
        self.register_buffer("perm0", (torch.arange(128) * 7) % 128)

    def forward(self, x):
        x = torch.roll(x, shifts=2, dims=-1)
        x = torch.index_select(x, -1, self.perm0)
        x = F.mish(x)
        x = torch.clamp(x, min=-1.44, max=1.44)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
