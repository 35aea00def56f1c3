# Kernels that rely on a block size dividing a run-time extent, as many real kernels do: the K loop
# loads without a mask (K % BLOCK_K == 0), the group index floor-divides `group` by BLOCK_K (group %
# BLOCK_K == 0), and a row kernel covers its columns with one unmasked tl.arange(0, N_COLS).
import torch
import triton
import triton.language as tl


@triton.jit
def group_rowsum_kernel(x_ptr, s_ptr, out_ptr, M, K, group, stride_xm,
                        BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_k = tl.arange(0, BLOCK_K)
    num_k = (K + BLOCK_K - 1) // BLOCK_K  # a ceiling division: no assumption
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for k in range(0, num_k):
        # Rows past M are read but only reach lanes the masked store drops; columns are not masked.
        x = tl.load(x_ptr + offs_m[:, None] * stride_xm + (k * BLOCK_K + offs_k)[None, :])
        g = k // (group // BLOCK_K)
        s = tl.load(s_ptr + g)
        acc += tl.sum(x, axis=1) * s
    tl.store(out_ptr + offs_m, acc, mask=offs_m < M)


@triton.jit
def row_scale_kernel(x_ptr, y_ptr, stride, N_COLS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N_COLS)
    x = tl.load(x_ptr + row * stride + cols)
    tl.store(y_ptr + row * stride + cols, x * 2.0)


def group_rowsum(x, s, group):
    M, K = x.shape
    out = torch.empty(M, device=x.device, dtype=torch.float32)
    BLOCK_M = 16
    grid = (triton.cdiv(M, BLOCK_M),)
    group_rowsum_kernel[grid](x, s, out, M, K, group, x.stride(0), BLOCK_M=BLOCK_M, BLOCK_K=32)
    return out


def row_scale(x):
    y = torch.empty_like(x)
    row_scale_kernel[(x.shape[0],)](x, y, x.stride(0), N_COLS=64)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(64, 256, device=dev)
    s = torch.randn(4, device=dev)
    return group_rowsum(x, s, 64), row_scale(x[:, :64].contiguous())
