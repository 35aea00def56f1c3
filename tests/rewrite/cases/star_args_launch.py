# A transpose launched with its strides spread from `*x.stride()` (TritonBench-G's matrix_transpose does
# this) and one with a `**kwargs` splat: launch options can be added beside a *args splat, which only fills
# kernel parameters, not beside **kwargs, which may carry them.
import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, sx0, sx1, sy0, sy1, n_rows, n_cols, BLOCK_R: tl.constexpr,
                     BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_C)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * sx0 + cols[None, :] * sx1, mask=mask)
    tl.store(y_ptr + cols[None, :] * sy0 + rows[:, None] * sy1, x, mask=mask)


def transpose(x):
    n_rows, n_cols = x.shape
    y = torch.empty((n_cols, n_rows), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(n_rows, 16),)
    transpose_kernel[grid](x, y, *x.stride(), *y.stride(), n_rows, n_cols, 16, triton.next_power_of_2(n_cols))
    return y


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * s, mask=offs < n)


def scale(x, s, **launch):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), s, BLOCK=128, **launch)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(40, 24, device=dev)
    return transpose(x), scale(x, 0.5)
