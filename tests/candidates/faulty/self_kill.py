# task: relu
# expect: crash signal
# tries: kills its own process with SIGKILL.
import os
import signal
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os.kill(os.getpid(), signal.SIGKILL)
