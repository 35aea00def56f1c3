# task: relu
# timeout_s: 3
# expect: timeout timeout
# tries: Python that never ends and swallows the timeout exception (the zygote must still kill it).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            try:
                while True:
                    pass
            except BaseException:
                pass
