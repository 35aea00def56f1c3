# task: relu
# expect: rejected torch_compute
# tries: the reference's operator reached under another name picked at run time: torch.ops.aten.clamp_min
# tries: assembled from strings, so no source check sees it; a Triton copy kernel follows.
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


_OP = "_".join(["clamp", "min"])


class ModelNew(nn.Module):
    def forward(self, x):
        op = getattr(torch.ops.aten, _OP)
        return passthrough(op(x, 0.0))
