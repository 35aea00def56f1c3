# task: relu
# expect: rejected torch_compute
# tries: the work done by a torch.compile'd function (Inductor generates its own kernels; under the worker's
# tries: dispatcher it runs as aten ops) beside a token Triton copy.
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


@torch.compile(dynamic=False)
def _fused(x):
    return torch.where(x > 0, x, torch.zeros_like(x))


class ModelNew(nn.Module):
    def forward(self, x):
        return passthrough(_fused(x))
