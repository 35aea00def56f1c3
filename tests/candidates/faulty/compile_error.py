# task: relu
# expect: compile_error triton_compile_error
# tries: a Triton compile error (tl.arange over a range that is not a power of two).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, 100)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        k[(1,)](x, out, x.numel(), BLOCK=128)
        return out
