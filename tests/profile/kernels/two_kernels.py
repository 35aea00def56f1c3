"""Two kernels in one call (a scale, then an add): profiled together, each with its time share."""
from _common import DEVICE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


@triton.jit
def add3_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask) + tl.load(z_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, v, mask=mask)


n = size(1 << 26, 5000)
x = torch.randn(n, device=DEVICE)
y = torch.randn(n, device=DEVICE)
z = torch.randn(n, device=DEVICE)
t = torch.empty_like(x)
out = torch.empty_like(x)
BLOCK = 2048


def call():
    grid = (triton.cdiv(n, BLOCK),)
    k1 = scale_kernel[grid](x, t, n, 2.0, BLOCK=BLOCK, num_warps=4)
    k2 = add3_kernel[grid](t, y, z, out, n, BLOCK=BLOCK, num_warps=4)
    return [k1, k2]


run_profiled(call, "two_kernels", lambda: torch.testing.assert_close(out, 2 * x + y + z))
