"""fp32 tl.dot without tensor cores: input_precision="ieee" runs the product on CUDA-core FMAs."""
from _common import DEVICE, SMOKE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def gemm_fp32_ieee_kernel(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, sam, sak, sbk, sbn, scm, scn,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a), tl.load(b), input_precision="ieee")
        a += BK * sak
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)


M = N = K = size(4096, 64)
BM, BN, BK = (128, 128, 32) if not SMOKE else (32, 32, 32)
a = torch.randn(M, K, device=DEVICE)
b = torch.randn(K, N, device=DEVICE)
c = torch.empty(M, N, device=DEVICE)


def call():
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    return gemm_fp32_ieee_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                       c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK, num_warps=8, num_stages=3)


run_profiled(call, "gemm_fp32_ieee_kernel",
             lambda: torch.testing.assert_close(c, a @ b, rtol=1e-3, atol=1e-2))
