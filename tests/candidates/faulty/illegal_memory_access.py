# task: relu
# expect: crash signal
# expect-gpu: runtime_error illegal_memory_access
# tries: an unmasked load a billion elements past the input. On a GPU: an illegal memory access (the CUDA
#        context is poisoned; fork isolation loses only the child). Under the interpreter: a segfault.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def oob_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) + 1_000_000_000
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        oob_kernel[(1,)](x, out, x.numel(), BLOCK=128)
        return out
