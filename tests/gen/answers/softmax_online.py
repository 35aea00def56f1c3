import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    # Online softmax: the running maximum and the rescaled sum in one pass over the row, then one pass
    # to normalise (two reads of the input instead of three).
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    m_acc = tl.full([BLOCK], -float("inf"), tl.float32)
    s_acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_acc, x)
        s_acc = s_acc * tl.exp(m_acc - m_new) + tl.exp(x - m_new)
        s_acc = tl.where(m_new == -float("inf"), 0.0, s_acc)
        m_acc = m_new
    m = tl.max(m_acc, axis=0)
    s = tl.sum(tl.where(m_acc == -float("inf"), 0.0, s_acc * tl.exp(m_acc - m)), axis=0)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_row + offs, (tl.exp(x - m) / s).to(y_ptr.dtype.element_ty), mask=offs < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor (online: two passes over each row)."""
    assert x.dim() == 2
    x = x.contiguous()
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=128, num_warps=1)
    return y
