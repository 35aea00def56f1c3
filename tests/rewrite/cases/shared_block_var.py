# One host variable sets two tile sizes of a launch, as attention wrappers write it (`BLOCK = 64;
# ...BLOCK_M=BLOCK, BLOCK_N=BLOCK`, or `BLOCK_N = BLOCK_M`). BLOCK_M steps the rows with the program id
# (the grid follows it), BLOCK_N steps a loop over the columns: each only changes performance.
# tile_rowsum: a literal variable read by both arguments and the grid. tile_rowmax: a computed BLOCK_M and
# BLOCK_N = BLOCK_M, the grid a lambda over meta. tile_rowmin: the shared variable also sizes a buffer,
# so it stays fixed. tile_both: both sizes step with program ids, so one grid cannot follow both.
import torch
import triton
import triton.language as tl


@triton.jit
def tile_rowsum_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=0.0), axis=1)
    tl.store(y_ptr + rows, acc, mask=rows < M)


@triton.jit
def tile_rowmax_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=-float("inf"))
        acc = tl.maximum(acc, tl.max(x, axis=1))
    tl.store(y_ptr + rows, acc, mask=rows < M)


@triton.jit
def tile_rowmin_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.full((BLOCK_M,), float("inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        m = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=float("inf"))
        acc = tl.minimum(acc, tl.min(x, axis=1))
    tl.store(y_ptr + rows, acc, mask=rows < M)


@triton.jit
def tile_both_kernel(x_ptr, y_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=m, other=0.0)
    tl.store(y_ptr + rows[:, None] * stride + cols[None, :], x * 2.0, mask=m)


def tile_rowsum(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=torch.float32)
    BLOCK = 16
    grid = (triton.cdiv(M, BLOCK),)
    tile_rowsum_kernel[grid](x, y, M, N, x.stride(0), BLOCK_M=BLOCK, BLOCK_N=BLOCK, num_warps=2)
    return y


def tile_rowmax(x):
    M, N = x.shape
    y = torch.empty(M, device=x.device, dtype=torch.float32)
    BLOCK_M = 16 if M > 8 else 8
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]),)
    BLOCK_N = BLOCK_M
    tile_rowmax_kernel[grid](x, y, M, N, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return y


def tile_rowmin(x):
    M, N = x.shape
    BLOCK = 16
    y = torch.empty(triton.cdiv(M, BLOCK) * BLOCK, device=x.device, dtype=torch.float32)
    tile_rowmin_kernel[(triton.cdiv(M, BLOCK),)](x, y, M, N, x.stride(0), BLOCK_M=BLOCK, BLOCK_N=BLOCK)
    return y[:M]


def tile_both(x):
    M, N = x.shape
    y = torch.empty_like(x)
    BLOCK = 16
    tile_both_kernel[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](x, y, M, N, x.stride(0), BLOCK_M=BLOCK,
                                                                    BLOCK_N=BLOCK)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(37, 45, device=dev)
    return tile_rowsum(x), tile_rowmax(x), tile_rowmin(x), tile_both(x)
