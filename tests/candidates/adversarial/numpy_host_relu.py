# task: relu
# expect: rejected host_compute
# tries: ReLU computed by numpy on the host (the tensor copied out, np.maximum, copied back), then a Triton copy.
import numpy as np
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
        host = np.maximum(x.detach().cpu().numpy(), 0.0)
        return passthrough(torch.from_numpy(host).to(x.device))
