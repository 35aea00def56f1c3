# task: relu
# expect: crash sys_exit
# tries: calls sys.exit() in forward.
import sys
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        sys.exit(3)
