# Composed by kiln datagen (comp_13_00007): subtract_max, elu
# families: reduction, activation; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 2048


class Model(nn.Module):
    """subtract_max, elu"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x - x.amax(dim=-1, keepdim=True)
        x = F.elu(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
