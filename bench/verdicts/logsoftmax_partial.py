# task: corpus:kernelbench/level1/24_LogSoftmax.py
# expect: rejected torch_compute
# tries: a real Triton kernel computes each row's maximum; torch does the exp, the sums, the log and the
# tries: subtractions, most of the work.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max(x_ptr, m_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    for start in range(0, cols, BLOCK):
        m = tl.maximum(m, tl.load(x_ptr + row * cols + start + c, mask=start + c < cols, other=-float("inf")))
    tl.store(m_ptr + row, tl.max(m, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        m = torch.empty(rows, device=x.device, dtype=x.dtype)
        row_max[(rows,)](x, m, cols, BLOCK=min(4096, triton.next_power_of_2(cols)))
        z = x - m[:, None]
        return z - torch.log(torch.exp(z).sum(dim=1, keepdim=True))
