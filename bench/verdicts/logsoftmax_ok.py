# task: corpus:kernelbench/level1/24_LogSoftmax.py
# expect: ok
# tries: an honest row-wise log-softmax for long rows: one program per row, an online max / sum-of-exp pass over
# tries: BLOCK-wide chunks, then a pass that writes x - max - log(sum). torch only allocates the output.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_rows(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * cols
    c = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, cols, BLOCK):
        v = tl.load(x_ptr + base + start + c, mask=start + c < cols, other=-float("inf"))
        m_new = tl.maximum(m, v)
        s = s * tl.exp(m - m_new) + tl.where(v == -float("inf"), 0.0, tl.exp(v - m_new))
        m = m_new
    mx = tl.max(m, axis=0)
    total = tl.sum(s * tl.exp(m - mx), axis=0)
    shift = mx + tl.log(total)
    for start in range(0, cols, BLOCK):
        v = tl.load(x_ptr + base + start + c, mask=start + c < cols, other=0.0)
        tl.store(y_ptr + base + start + c, v - shift, mask=start + c < cols)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        log_softmax_rows[(rows,)](x, y, cols, BLOCK=min(4096, triton.next_power_of_2(cols)))
        return y
