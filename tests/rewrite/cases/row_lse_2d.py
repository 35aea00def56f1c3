# Log-sum-exp of row pieces on a 2-D grid (rows x pieces), autotuned over num_warps only, with the
# program id widened to int64 (as in FLA's logsumexp_fwd). Rows per program loops over axis 0; axis 1
# and the autotuner stay as they are.
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=4)], key=["D"])
@triton.jit
def lse_kernel(x, z, D: tl.constexpr, B: tl.constexpr):
    i_n, i_d = tl.program_id(0).to(tl.int64), tl.program_id(1).to(tl.int64)
    o_d = i_d * B + tl.arange(0, B)
    m_d = o_d < D
    b_x = tl.load(x + i_n * D + o_d, mask=m_d, other=-float("inf"))
    b_m = tl.max(b_x, 0)
    b_z = tl.log(tl.sum(tl.exp(b_x - b_m), 0)) + b_m
    tl.store(z + i_n * tl.cdiv(D, B) + i_d, b_z)


def lse(x):
    N, D = x.shape
    B = 32
    ND = triton.cdiv(D, B)
    z = x.new_empty(N, ND, dtype=torch.float)
    lse_kernel[(N, ND)](x, z, D=D, B=B)
    return z.logsumexp(-1)


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return lse(torch.randn(13, 70, device=dev))
