"""Launch-bound tiny kernel: a 4096-element add runs in a couple of microseconds."""
from _common import DEVICE, run_profiled
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def tiny_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 4096
x = torch.randn(n, device=DEVICE)
y = torch.randn(n, device=DEVICE)
out = torch.empty_like(x)


def call():
    return tiny_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)


run_profiled(call, "tiny_add_kernel", lambda: torch.testing.assert_close(out, x + y))
