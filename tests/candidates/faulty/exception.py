# task: relu
# expect: runtime_error exception
# tries: raises an exception in forward.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        raise ValueError("candidate failed on purpose")
