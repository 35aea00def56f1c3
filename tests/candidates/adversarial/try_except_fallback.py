# task: relu
# expect: rejected swallowed_kernel_error
# tries: a broken kernel wrapped in try/except that falls back to torch (the reference's own op).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, 100)   # not a power of two: does not compile
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        try:
            bad_kernel[(1,)](x, out, x.numel(), BLOCK=128)
            return out
        except Exception:
            return torch.relu(x)
