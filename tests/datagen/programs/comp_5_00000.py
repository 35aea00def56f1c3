# Composed by kiln datagen (comp_5_00000): l2_normalize, clamp, layer_norm
# families: normalization, elementwise; dtype: float32
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 3
seq_len = 2
features = 16


class Model(nn.Module):
    """l2_normalize, clamp, layer_norm"""

    def __init__(self):
        super().__init__()
        self.norm0 = nn.LayerNorm(16, dtype=torch.float32)

    def forward(self, x):
        x = F.normalize(x, dim=-1)
        x = torch.clamp(x, min=-1.08, max=1.08)
        x = self.norm0(x)
        return x


def get_inputs():
    x = torch.randn(batch_size, seq_len, features, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []
