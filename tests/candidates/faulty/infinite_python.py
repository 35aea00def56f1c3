# task: relu
# timeout_s: 3
# expect: timeout timeout
# tries: Python that never ends.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            pass
