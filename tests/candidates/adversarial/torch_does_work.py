# task: matmul
# expect: rejected torch_compute
# tries: torch.matmul does the real work; a Triton copy kernel runs over the result as decoration.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, A, B):
        c = torch.matmul(A, B)
        out = torch.empty_like(c)
        copy_kernel[(triton.cdiv(c.numel(), 1024),)](c, out, c.numel(), BLOCK=1024)
        return out
