import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def l2norm_clamp_kernel(x_ptr, out_ptr, n_cols, lo, hi, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    y = x / tl.maximum(norm, 1e-12)
    y = tl.minimum(tl.maximum(y, lo), hi)
    tl.store(out_ptr + row * n_cols + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n_cols = x.shape[-1]
        rows = x.numel() // n_cols
        l2norm_clamp_kernel[(rows,)](x, out, n_cols, -1.08, 1.08, BLOCK=triton.next_power_of_2(n_cols))
        return out
