# Tile sizes the wrapper guards with an assert, as flash-linear-attention's parallel_attention writes it
# (`BTL, BTS = 128, 32` then `assert BTL % BTS == 0`): the assert only checks them (a value it rejects makes the
# call raise, and a failing candidate is never accepted), so they stay tunable. rowsum_branch reads its tile
# size in a condition that picks a code path: that is a use, so it stays fixed.
import torch
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=0.0), axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < M)


@triton.jit
def rowsum_branch_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=0.0), axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < M)


def rowsum(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N = 16, 8
    assert BLOCK_M % BLOCK_N == 0, "BLOCK_M must be a multiple of BLOCK_N"
    grid = (triton.cdiv(M, BLOCK_M),)
    rowsum_kernel[grid](x, y, M, N, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y


def rowsum_branch(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=torch.float32)
    BLOCK_M = 16
    if M < BLOCK_M:
        return x.float().sum(dim=1)
    rowsum_branch_kernel[(triton.cdiv(M, BLOCK_M),)](x, y, M, N, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=8)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(37, 45, device=dev)
    return rowsum(x), rowsum_branch(x)
