"""Partial last wave: a compute-heavy kernel (a long FMA chain per element) with 1024-thread
programs (at most 2 resident per SM) and a grid of 2 x SMs + 15%: the second wave runs mostly
empty."""
from _common import DEVICE, run_profiled, size, sm_count
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def fma_chain_kernel(x_ptr, out_ptr, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    a = x
    b = x * 0.5
    for _ in range(ITERS):
        a = a * 0.999 + 0.001
        b = b * 1.001 - 0.001
    tl.store(out_ptr + offs, a + b)


BLOCK = 1024
programs = int(2 * sm_count() * 1.15)
ITERS = size(4096, 4)
x = torch.rand(programs * BLOCK, device=DEVICE)
out = torch.empty_like(x)


def call():
    return fma_chain_kernel[(programs,)](x, out, ITERS=ITERS, BLOCK=BLOCK, num_warps=32)


run_profiled(call, "fma_chain_kernel")
