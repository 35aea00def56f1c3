# One launch site for two kernels chosen at run time (`fx = a if c else b; fx[grid](...)`).
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, x * 2.0, mask=m)


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, x + 1.0, mask=m)


def apply(x, scale):
    out = torch.empty_like(x)
    n = x.numel()
    fx = scale_kernel if scale else shift_kernel
    fx[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(1000, device=dev)
    return apply(x, True), apply(x, False)
