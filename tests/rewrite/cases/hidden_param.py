# Block sizes a wrapper takes from its caller. scale() passes BLOCK to the launch and computes the grid
# and num_warps from it: BLOCK only sets performance (the wrapper rebinds it when tuned). partials()
# also sizes its output (one partial sum per block) by the caller's BLOCK: that one must stay fixed.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


@triton.jit
def partial_kernel(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


def scale(x, alpha, BLOCK=256):
    """y = alpha * x."""
    y = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, BLOCK),)
    scale_kernel[grid](x, y, n, alpha, BLOCK=BLOCK, num_warps=4 if BLOCK < 1024 else 8)
    return y


def partials(x, block=64):
    n = x.numel()
    part = torch.empty(triton.cdiv(n, block), device=x.device, dtype=torch.float32)
    partial_kernel[(triton.cdiv(n, block),)](x, part, n, BLOCK=block)
    return part


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(3000, device=dev)
    return scale(x, 0.5, BLOCK=128), partials(x)
