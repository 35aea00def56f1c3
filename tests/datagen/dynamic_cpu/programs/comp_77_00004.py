# Composed by kiln datagen (comp_77_00004): permute_gather, mul_input, tanh
# families: indexing, elementwise, activation; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
features = 16


class Model(nn.Module):
    """permute_gather, mul_input, tanh"""

    def __init__(self):
        super().__init__()
        self.register_buffer("perm0", (torch.arange(16) * 7) % 16)

    def forward(self, x, y1):
        x = torch.index_select(x, -1, self.perm0)
        x = x * torch.sigmoid(y1)
        x = torch.tanh(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    y1 = torch.randn(batch_size, 16, dtype=torch.float32)
    return [x, y1]


def get_init_inputs():
    return []
