# task: relu
# expect: rejected torch_compute
# tries: ReLU written as x * (x > 0) in torch (aten gt + mul, not relu, so the reference's operator names never
# tries: appear); a Triton copy kernel passes the result through.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < n
    tl.store(dst_ptr + i, tl.load(src_ptr + i, mask=keep), mask=keep)


def passthrough(t):
    dst = torch.empty_like(t)
    n = t.numel()
    touch_kernel[(triton.cdiv(n, 256),)](t, dst, n, BLOCK=256)
    return dst


class ModelNew(nn.Module):
    def forward(self, x):
        return passthrough(x * (x > 0))
