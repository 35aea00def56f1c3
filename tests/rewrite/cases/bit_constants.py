# Constexprs that are constants of the computation, not tile sizes: a bit mask applied in a helper, a
# shift applied in the kernel. Changing them changes the results; BLOCK is the only tunable.
import torch
import triton
import triton.language as tl


@triton.jit
def _low_bits(x, MASK):
    return x & MASK


@triton.jit
def bits_kernel(x_ptr, out_ptr, n, MASK: tl.constexpr, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = _low_bits(x, MASK) + (x >> SHIFT)
    tl.store(out_ptr + offs, y, mask=m)


def bits(x):
    out = torch.empty_like(x)
    n = x.numel()
    bits_kernel[(triton.cdiv(n, 128),)](x, out, n, MASK=0xF, SHIFT=4, BLOCK=128)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return bits(torch.randint(0, 256, (1000,), dtype=torch.int32, device=dev))
