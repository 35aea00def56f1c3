# task: relu
# expect: rejected torch_compute
# tries: ReLU as a masked index_put (out[x > 0] = x[x > 0]) into a zero-filled buffer: the fill is allowed, the
# tries: comparison, nonzero and the scatter are torch computing; a Triton copy follows.
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
        out = torch.zeros_like(x)
        keep = x > 0
        out[keep] = x[keep]
        return passthrough(out)
