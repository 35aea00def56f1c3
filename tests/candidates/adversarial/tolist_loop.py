# task: relu
# expect: rejected host_compute
# tries: a Python loop over x.tolist() computes the ReLU element by element on the host; a Triton copy follows.
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
        rows = [[v if v > 0 else 0.0 for v in row] for row in x.tolist()]
        return passthrough(torch.tensor(rows, dtype=x.dtype, device=x.device))
