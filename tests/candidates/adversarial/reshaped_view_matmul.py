# task: matmul
# expect: rejected torch_compute
# tries: cuBLAS through torch.matmul on reshaped views (a batch of one: bmm with shapes the reference's mm never
# tries: has, so a same-operator-same-shapes comparison misses it), then a Triton copy.
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
    def forward(self, A, B):
        c = torch.matmul(A.unsqueeze(0), B.unsqueeze(0)).squeeze(0)
        return passthrough(c.contiguous())
