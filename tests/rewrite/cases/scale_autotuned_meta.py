# An autotuned elementwise kernel whose grid reads the block size the autotuner picks (META['BLOCK']): the
# number of tiles is known only inside the autotuner, so rows per program refuses it. Its sibling reads a
# block size the launch passes as a name.
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def scale_tuned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_tuned_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


def shift(x, block=16):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META[ 'BLOCK' ]),)
    shift_kernel[grid](x, out, n, BLOCK=block)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(1000, device=dev)
    return scale(x), shift(x)
