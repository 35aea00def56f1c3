# task: relu
# expect: mismatch value_mismatch
# tries: computes in float16 inside the kernel on float32 data (beyond the fp32 tolerance of 1e-4).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_fp16(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float16)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0).to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        relu_fp16[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
