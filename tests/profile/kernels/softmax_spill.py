"""Register spills: the same row softmax with a 32768-wide row on 4 warps (256 values per thread,
more than the 255 registers a thread can have)."""
from _common import DEVICE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def softmax_spill_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=mask)


R, N = size(4096, 4), size(32768, 512)
x = torch.randn(R, N, device=DEVICE)
out = torch.empty_like(x)


def call():
    return softmax_spill_kernel[(R,)](x, out, N, BLOCK=triton.next_power_of_2(N), num_warps=4)


run_profiled(call, "softmax_spill_kernel", lambda: torch.testing.assert_close(out, torch.softmax(x, 1)))
