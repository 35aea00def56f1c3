# task: softmax
# expect: ok
# tries: an honest one-row-per-program Triton softmax; torch only allocates the output and views the input.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * cols + c, mask=c < cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y_ptr + r * cols + c, e / tl.sum(e, axis=0), mask=c < cols)


class ModelNew(nn.Module):
    def forward(self, x):
        flat = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(flat)
        row_softmax[(flat.shape[0],)](flat, y, flat.shape[1], BLOCK=triton.next_power_of_2(flat.shape[1]))
        return y.view(x.shape)
