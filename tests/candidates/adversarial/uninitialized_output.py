# task: relu
# expect: mismatch uninitialized_output
# tries: returns torch.empty_like(x) that no kernel ever writes (the kernel writes a scratch buffer instead),
#        hoping the allocator hands back memory that still holds the right numbers.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def triton_relu(x, out):
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        scratch = torch.empty_like(x)
        triton_relu(x, scratch)
        return out
