"""An fp32 matmul whose tl.dot asks for input_precision="ieee": it runs on CUDA-core FMAs, not tensor
cores (the diagnosis rule fp32_dot_without_tensor_cores). Used by src/app/ncu_profiler_test.cc."""
import torch
import triton
import triton.language as tl


@triton.jit
def gemm_fp32_ieee_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
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


def gemm(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    gemm_fp32_ieee_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1), BM=64, BN=64, BK=32, num_warps=4, num_stages=3)
    return c
