"""Memory-bound with headroom, uncoalesced: out = x.T where each program reads a COLUMN of x
(consecutive lanes read addresses N floats apart: 4 useful bytes per 32-byte sector)."""
from _common import DEVICE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def transpose_naive_kernel(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)            # row of out = column of x
    cb = tl.program_id(1)
    cols = cb * BLOCK + tl.arange(0, BLOCK)
    mask = cols < M
    v = tl.load(x_ptr + cols * N + row, mask=mask)   # strided by N: uncoalesced
    tl.store(out_ptr + row * M + cols, v, mask=mask)  # contiguous


M = N = size(8192, 64)
x = torch.randn(M, N, device=DEVICE)
out = torch.empty(N, M, device=DEVICE)
BLOCK = 256


def call():
    return transpose_naive_kernel[(N, triton.cdiv(M, BLOCK))](x, out, M, N, BLOCK=BLOCK, num_warps=4)


run_profiled(call, "transpose_naive_kernel", lambda: torch.testing.assert_close(out, x.t()))
