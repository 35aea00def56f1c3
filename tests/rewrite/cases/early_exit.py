# Early exits as real kernels write them: a guard `if row >= n_rows: return` at the top of the body (rows
# padded up to a multiple of the grid), a guard on a second axis, and a bare `return` closing the body. A loop
# over tiles keeps them: each guard's exit skips only its own iteration. A return elsewhere is refused.
import torch
import triton
import triton.language as tl


@triton.jit
def guarded_scale_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if row >= n_rows:
        return
    col_block = tl.program_id(1)
    if col_block * BLOCK >= n_cols:  # the column grid is padded too
        return
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, x * 3.0 + row, mask=mask)
    return


@triton.jit
def nested_return_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if pid > 0:
        tl.store(out_ptr + offs, x, mask=offs < n)
        return
    tl.store(out_ptr + offs, -x, mask=offs < n)


def guarded_scale(x):
    n_rows, n_cols = x.shape
    out = torch.zeros_like(x)
    BLOCK = 16
    guarded_scale_kernel[(n_rows + 3, triton.cdiv(n_cols, BLOCK) + 1)](x, out, n_rows, n_cols, x.stride(0), BLOCK=BLOCK)
    return out


def nested_return(x):
    out = torch.empty_like(x)
    nested_return_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return guarded_scale(torch.randn(13, 40, device=dev))
