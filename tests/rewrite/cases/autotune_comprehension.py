# A matrix-vector product autotuned over configs written as a comprehension (as TritonBench-G's
# matrix_vector_multip writes them): the rows of a program loop over the columns in BLOCK_M steps.
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=w)
        for m in [16, 32]
        for n in [1, 2, 4]
        for s in [1, 2]
        for w in [1, 2]
    ],
    key=["M", "N"],
)
@triton.jit
def mv_kernel(A, B, C, N, M, stride_an, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    offset_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)[:, None]
    offset_m = tl.arange(0, BLOCK_M)[None, :]
    n_mask = offset_n < N
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for m in range(0, M, BLOCK_M):
        m_mask = m + offset_m < M
        a = tl.load(A + offset_n * stride_an + m + offset_m, mask=n_mask & m_mask, other=0.0)
        b = tl.load(B + m + offset_m, mask=m_mask, other=0.0)
        acc += a * b
    out = tl.sum(acc, axis=1)
    tl.store(C + pid * BLOCK_N + tl.arange(0, BLOCK_N), out, mask=pid * BLOCK_N + tl.arange(0, BLOCK_N) < N)


def mv(a, b):
    N, M = a.shape
    c = torch.empty((N,), device=a.device, dtype=torch.float32)
    grid = lambda META: (triton.cdiv(N, META["BLOCK_N"]),)
    mv_kernel[grid](a, b, c, N, M, a.stride(0))
    return c


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    a = torch.randn(37, 50, device=dev)
    b = torch.randn(50, device=dev)
    return mv(a, b)
