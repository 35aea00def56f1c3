# Elementwise scale launched with a grid written as `kernel[n,]` (a tuple without parentheses).
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, x * alpha, mask=m)


def scale(x, alpha):
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 128
    num_blocks = triton.cdiv(n, BLOCK)
    scale_kernel[num_blocks,](x, out, n, alpha, BLOCK=BLOCK)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return scale(torch.randn(1000, device=dev), 0.5)
