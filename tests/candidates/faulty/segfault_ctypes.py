# task: relu
# expect: crash signal
# tries: dereferences a null pointer through ctypes (SIGSEGV).
import ctypes
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        ctypes.memset(16, 0, 8)
        return x
