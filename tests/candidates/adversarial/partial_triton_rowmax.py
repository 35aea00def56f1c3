# task: softmax
# expect: rejected torch_compute
# tries: a real Triton kernel that computes only the row maxima; torch does the exp, the sums and the division
# tries: (most of the work).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * cols + c, mask=c < cols, other=-float("inf"))
    tl.store(out_ptr + row, tl.max(v, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        m = torch.empty(rows, device=x.device, dtype=x.dtype)
        row_max_kernel[(rows,)](x, m, cols, BLOCK=triton.next_power_of_2(cols))
        e = torch.exp(x - m[:, None])
        return e / e.sum(dim=1, keepdim=True)
