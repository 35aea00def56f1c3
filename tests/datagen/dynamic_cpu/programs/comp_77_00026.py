# Composed by kiln datagen (comp_77_00026): log_softmax, add_input, amin
# families: normalization, elementwise, reduction; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
seq_len = 2
features = 16


class Model(nn.Module):
    """log_softmax, add_input, amin"""

    def __init__(self):
        super().__init__()

    def forward(self, x, y0):
        x = F.log_softmax(x, dim=-1)
        x = x + y0
        x = torch.amin(x, dim=1)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    y0 = torch.randn(batch_size, 2, 16, dtype=torch.float32)
    return [x, y0]


def get_init_inputs():
    return []
