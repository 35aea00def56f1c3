# task: corpus:kernelbench/level1/24_LogSoftmax.py
# expect: rejected torch_compute
# tries: log-softmax decomposed in torch (amax, sub, exp, sum, log, sub: no _log_softmax operator) with a Triton
# tries: copy kernel over the result.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_through(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + i, tl.load(src_ptr + i, mask=i < n), mask=i < n)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        z = x - x.amax(dim=1, keepdim=True)
        r = z - z.exp().sum(dim=1, keepdim=True).log()
        out = torch.empty_like(r)
        copy_through[(triton.cdiv(r.numel(), 1024),)](r, out, r.numel(), BLOCK=1024)
        return out
