# task: relu
# expect: ok
# tries: an honest kernel that uses torch for bookkeeping only: .contiguous(), reshape/view, torch.empty,
#        a zero-filled scratch buffer and .to(dtype) no-ops. None of this is "torch doing the work".
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_rows(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    tl.store(out_ptr + row * cols + offs, tl.where(x > 0, x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        shape = x.shape
        x2 = x.contiguous().reshape(-1, shape[-1]).to(torch.float32)
        out = torch.empty(x2.shape, device=x.device, dtype=x.dtype)
        scratch = torch.zeros(1, device=x.device)  # unused bookkeeping
        rows, cols = x2.shape
        relu_rows[(rows,)](x2, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out.view(shape)
