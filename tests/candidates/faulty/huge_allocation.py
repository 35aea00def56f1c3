# task: relu
# expect: runtime_error out_of_memory
# tries: allocates 4 PiB (more than any device or host has).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        big = torch.empty(1 << 50, dtype=torch.float32, device=x.device)
        return big[: x.numel()].view_as(x)
