"""Latency-bound small grid: 32 row sums (one program per row) on a GPU with 100+ SMs."""
from _common import DEVICE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


R, N = 32, size(1 << 16, 4096)
x = torch.randn(R, N, device=DEVICE)
out = torch.empty(R, device=DEVICE)


def call():
    return row_sum_kernel[(R,)](x, out, N, BLOCK=1024, num_warps=4)


run_profiled(call, "row_sum_kernel", lambda: torch.testing.assert_close(out, x.sum(1), rtol=1e-3, atol=1e-2))
