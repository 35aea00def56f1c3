# Tile sizes written as literals in kernel bodies (issue 21). scale_kernel's 1024 only tiles the
# elements (the grid repeats it): it is lifted and may be retuned. row_kernel's 64 covers a row of 64
# in one piece and its stores are unmasked: lifted, but it stays fixed. chunk_sum_kernel's 128 also
# sizes the caller's buffer of partial sums: it stays a literal. clamp_kernel's 256 is also a value
# the data is compared with: it stays a literal.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha):
    pid = tl.program_id(0)
    offs = pid * 1024 + tl.arange(0, 1024)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


@triton.jit
def row_kernel(x_ptr, y_ptr, stride):
    row = tl.program_id(0)
    cols = tl.arange(0, 64)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(y_ptr + row * stride + cols, x - tl.max(x, axis=0))


@triton.jit
def chunk_sum_kernel(x_ptr, part_ptr, n):
    pid = tl.program_id(0)
    offs = pid * 128 + tl.arange(0, 128)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def clamp_kernel(x_ptr, y_ptr, n):
    offs = tl.program_id(0) * 256 + tl.arange(0, 256)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, tl.minimum(x, 256), mask=m)


def scale(x, alpha):
    y = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, y, n, alpha)
    return y


def row_shift(x):
    y = torch.empty_like(x)
    row_kernel[(x.shape[0],)](x, y, x.stride(0))
    return y


def chunk_sums(x):
    n = x.numel()
    part = torch.empty(triton.cdiv(n, 128), device=x.device, dtype=torch.float32)
    chunk_sum_kernel[(triton.cdiv(n, 128),)](x, part, n)
    return part


def clamp(x):
    y = torch.empty_like(x)
    n = x.numel()
    clamp_kernel[(triton.cdiv(n, 256),)](x, y, n)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(3000, device=dev)
    r = torch.randn(5, 64, device=dev)
    return scale(x, 0.5), row_shift(r), chunk_sums(x), clamp(x * 300)
