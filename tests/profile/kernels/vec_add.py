"""Memory-bound at the roof: a large fp32 vector add (3 x 512 MiB streams)."""
from _common import DEVICE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def vec_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


n = size(1 << 27, 10000)
x = torch.randn(n, device=DEVICE)
y = torch.randn(n, device=DEVICE)
out = torch.empty_like(x)
BLOCK = 4096


def call():
    return vec_add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK, num_warps=8)


run_profiled(call, "vec_add_kernel", lambda: torch.testing.assert_close(out, x + y))
