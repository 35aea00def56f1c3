# Composed by kiln datagen (comp_13_00016): batch_norm, amin
# families: normalization, reduction; dtype: bfloat16
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
features = 512


class Model(nn.Module):
    """batch_norm, amin"""

    def __init__(self):
        super().__init__()
        self.bn0 = nn.BatchNorm1d(512, dtype=torch.bfloat16)

    def forward(self, x):
        x = self.bn0(x)
        x = torch.amin(x, dim=-1)
        return x


def get_inputs():
    x = torch.randn(batch_size, features, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []
