# A module with a forward kernel its task runs and a backward kernel it never runs (the perf harness of
# softmax_flaggems or fast_rms_layernorm times only the forward). The backward has more tunables, so a
# choice by tunables alone picks it; kiln optimize sees from the original's run that it never ran.
import torch
import triton
import triton.language as tl


@triton.jit
def scale_fwd_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


@triton.jit
def scale_bwd_kernel(g_ptr, dx_ptr, n_rows, n_cols, alpha, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    for start in range(0, n_cols, BLOCK_C):
        cols = start + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        offs = rows[:, None] * n_cols + cols[None, :]
        tl.store(dx_ptr + offs, tl.load(g_ptr + offs, mask=mask) * alpha, mask=mask)


def scale(x, alpha):
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 256
    scale_fwd_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, alpha, BLOCK=BLOCK)
    return y


def scale_backward(g, alpha):
    dx = torch.empty_like(g)
    n_rows, n_cols = g.shape
    BLOCK_R = 16
    BLOCK_C = 64
    scale_bwd_kernel[(triton.cdiv(n_rows, BLOCK_R),)](g, dx, n_rows, n_cols, alpha, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
    return dx
