# Row-wise scale whose program id is widened to int64 before it multiplies the row stride, as in
# Liger's kernels (`tl.program_id(0).to(tl.int64)`). A rewrite that loops over tiles must keep `.to`
# valid: the loop variable is a tensor when compiled but a Python int under Triton's interpreter.
import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(x_ptr, out_ptr, stride, n_cols, alpha, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_ptr += row * stride
    out_ptr += row * stride
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + cols, x * alpha - tl.sum(x, axis=0) / n_cols, mask=mask)


def row_scale(x, alpha):
    n_rows, n_cols = x.shape
    out = torch.empty_like(x)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    row_scale_kernel[(n_rows,)](x, out, x.stride(0), n_cols, alpha, BLOCK_SIZE=BLOCK_SIZE)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return row_scale(torch.randn(37, 100, device=dev), 0.5)
