# task: relu
# timeout_s: 4
# expect: timeout timeout
# tries: a kernel that never ends (a device-side infinite loop; a Python loop under the interpreter).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def spin(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.load(x_ptr) * 0
    while i < 1:
        i = i * 1
    tl.store(out_ptr, i)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        spin[(1,)](x, out, x.numel(), BLOCK=128)
        return out
