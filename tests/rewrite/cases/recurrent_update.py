# A recurrence in the style of fused_recurrent_delta's backward kernel: the first loop reads and
# writes dk through the same advancing pointer (read-modify-write), the second loads x and stores y
# (different buffers). Pipelining may only touch the second loop.
import torch
import triton
import triton.language as tl


@triton.jit
def _recurrent_update(dk, dv, x, y, T, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    p_dk = dk + row * T * D + cols
    p_dv = dv + row * T * D + cols
    h = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(0, T):
        d_k = tl.load(p_dk, mask=mask, other=0.)
        d_v = tl.load(p_dv, mask=mask, other=0.)
        h += d_v
        d_k -= h
        tl.store(p_dk, d_k, mask=mask)
        p_dk += D
        p_dv += D
    for t in range(0, T):
        offs = row * T * D + t * D + cols
        v = tl.load(x + offs, mask=mask, other=0.)
        tl.store(y + offs, v * 2.0 + tl.sum(h, axis=0), mask=mask)


@triton.jit
def _accumulate_rows(acc, src, T, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    for t in range(0, T):
        prev = tl.load(acc + cols, mask=mask, other=0.)
        s = tl.load(src + row * T * D + t * D + cols, mask=mask, other=0.)
        tl.atomic_max(acc + cols, tl.maximum(prev, s), mask=mask)


def recurrent_update(dk, dv, x):
    R, T, D = x.shape
    y = torch.empty_like(x)
    _recurrent_update[(R,)](dk, dv, x, y, T, D, BLOCK=32)
    return dk, y


def accumulate_rows(src):
    R, T, D = src.shape
    acc = torch.zeros((D,), dtype=src.dtype, device=src.device)
    _accumulate_rows[(R,)](acc, src, T, D, BLOCK=32)
    return acc


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    dk = torch.randn(3, 5, 20, device=dev)
    dv = torch.randn(3, 5, 20, device=dev)
    x = torch.randn(3, 5, 20, device=dev)
    return recurrent_update(dk, dv, x)
