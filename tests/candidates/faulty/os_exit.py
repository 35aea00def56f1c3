# task: relu
# expect: crash exit
# tries: calls os._exit() in forward (no exception, no cleanup: the process just ends).
import os
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os._exit(7)
