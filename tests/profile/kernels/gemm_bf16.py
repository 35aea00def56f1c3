"""Compute-bound: a large bf16 GEMM on the tensor cores (8192^3, 128x256x64 tiles, GROUP_M=8)."""
from _common import DEVICE, SMOKE, run_profiled, size
import torch  # noqa: E402
import triton
import triton.language as tl


@triton.jit
def gemm_bf16_kernel(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = pid // (GROUP_M * num_n)
    first_m = group * GROUP_M
    gm = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % (GROUP_M * num_n)) % gm)
    pid_n = (pid % (GROUP_M * num_n)) // gm
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * sak
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty))


M = N = K = size(8192, 64)
BM, BN, BK = (128, 256, 64) if not SMOKE else (32, 32, 32)
DT = torch.float16 if SMOKE else torch.bfloat16  # the interpreter mishandles bf16 dots
a = torch.randn(M, K, device=DEVICE, dtype=DT)
b = torch.randn(K, N, device=DEVICE, dtype=DT)
c = torch.empty(M, N, device=DEVICE, dtype=DT)


def call():
    grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN),)
    return gemm_bf16_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                  c.stride(0), c.stride(1), BM=BM, BN=BN, BK=BK, GROUP_M=8,
                                  num_warps=8, num_stages=3)


run_profiled(call, "gemm_bf16_kernel",
             lambda: torch.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=2e-2, atol=1.0))
