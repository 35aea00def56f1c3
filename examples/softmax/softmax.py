"""A row-wise softmax in Triton: correct, deliberately untuned (kiln's bundled example task).

Each program handles one row in chunks of BLOCK=64 columns with num_warps=1 and three passes over the row
(max, sum of exponentials, normalise), so it reads the input three times. `kiln optimize` should find
a faster variant (one-pass for rows that fit, bigger blocks, more warps).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    m_acc = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m_acc = tl.maximum(m_acc, x)
    m = tl.max(m_acc, axis=0)
    s_acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        s_acc += tl.exp(x - m)
    s = tl.sum(s_acc, axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        y = tl.exp(x - m) / s
        tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor."""
    assert x.dim() == 2
    x = x.contiguous()
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=64, num_warps=1)
    return y
