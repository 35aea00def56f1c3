# A causal loop bound from a value loaded through a pointer, as the context-attention kernels of LightLLM
# write it (TritonBench-G's context_attn_bloom: `prompt_cache_len = tl.load(b_prompt_cache_len + cur_batch)`,
# then `block_end_loc = tl.minimum((start_m + 1) * BLOCK_M + prompt_cache_len, ...)`). The loaded length is
# data, not a pointer: the block number start_m plus one, times BLOCK_M, is the end of the block's rows, and
# BLOCK_M (which the grid follows) and BLOCK_N only change performance. causal_rowsum: one host variable
# sets both; y[b, i] = sum of x[b, j] for j <= i + prefix[b], j < n[b] + prefix[b].
# block_scale_kernel: the control: the block number offsets a real pointer (one scale per BLOCK rows, laid
# out by the caller), so BLOCK stays fixed.
import torch
import triton
import triton.language as tl


@triton.jit
def causal_rowsum_kernel(x_ptr, y_ptr, n_ptr, prefix_ptr, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    start_m = tl.program_id(1)
    n = tl.load(n_ptr + b)
    prefix = tl.load(prefix_ptr + b)
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    block_end = tl.minimum((start_m + 1) * BLOCK_M + prefix, n + prefix)
    for start_n in range(0, block_end, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + b * stride + cols, mask=cols < n + prefix, other=0.0)
        keep = cols[None, :] <= rows[:, None] + prefix
        acc += tl.sum(tl.where(keep, x[None, :], 0.0), axis=1)
    tl.store(y_ptr + b * stride + rows, acc, mask=rows < n)


@triton.jit
def block_scale_kernel(x_ptr, s_ptr, y_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.load(s_ptr + pid)
    m = offs < N
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


def causal_rowsum(x, n, prefix, max_len):
    B, L = x.shape
    y = torch.zeros_like(x)
    BLOCK = 16
    grid = (B, triton.cdiv(max_len, BLOCK))
    causal_rowsum_kernel[grid](x, y, n, prefix, x.stride(0), BLOCK_M=BLOCK, BLOCK_N=BLOCK, num_warps=4)
    return y


def block_scale(x, s):
    y = torch.empty_like(x)
    N = x.numel()
    block_scale_kernel[(triton.cdiv(N, 32),)](x, s, y, N, BLOCK=32)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(3, 64, device=dev)
    n = torch.tensor([37, 5, 50], dtype=torch.int32, device=dev)
    prefix = torch.tensor([3, 0, 9], dtype=torch.int32, device=dev)
    s = torch.randn(4, device=dev)
    return causal_rowsum(x, n, prefix, 50), block_scale(x.reshape(-1)[:100].contiguous(), s)
