# Composed by kiln datagen (comp_13_00001): roll, l2_normalize, mul_input, softmax
# families: indexing, normalization, elementwise; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
features = 128


class Model(nn.Module):
    """roll, l2_normalize, mul_input, softmax"""

    def __init__(self):
        super().__init__()

    def forward(self, x, y0):
        x = torch.roll(x, shifts=4, dims=-1)
        x = F.normalize(x, dim=-1)
        x = x * torch.sigmoid(y0)
        x = torch.softmax(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.float32)
    y0 = torch.randn(batch_size, 128, dtype=torch.float32)
    return [x, y0]


def get_init_inputs():
    return []
