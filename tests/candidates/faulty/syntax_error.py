# task: relu
# expect: compile_error syntax_error
# tries: a Python syntax error.
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x)
        return x
