# task: softmax
# expect: rejected torch_compute
# tries: softmax decomposed into torch exp, sum and div (no _softmax operator), with a Triton copy at the end.
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
        shifted = x - x.amax(dim=1, keepdim=True)
        e = shifted.exp()
        return passthrough(e / e.sum(dim=1, keepdim=True))
