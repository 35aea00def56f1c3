# A chained scan whose programs wait on their predecessor's flag (atomic_cas spin): serialising programs
# into rows per program could deadlock, so the rewrite refuses. Its sibling's grid reads META['BLOCK'],
# which the launch passes as a literal: rows per program applies there.
import torch
import triton
import triton.language as tl


@triton.jit
def chained_sum_kernel(x_ptr, out_ptr, flags_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    s = tl.sum(tl.load(x_ptr + offs), axis=0)
    if pid > 0:
        while tl.atomic_cas(flags_ptr + pid - 1, 1, 1) == 0:
            pass
        s += tl.load(out_ptr + pid - 1)
    tl.store(out_ptr + pid, s)
    tl.atomic_xchg(flags_ptr + pid, 1)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def chained_sum(x, block=16):
    n = x.numel() // block
    out = torch.empty(n, device=x.device, dtype=x.dtype)
    flags = torch.zeros(n, device=x.device, dtype=torch.int32)
    chained_sum_kernel[(n,)](x, out, flags, BLOCK=block)
    return out


def scale(x):
    out = torch.empty_like(x)
    scale_kernel[lambda META: (triton.cdiv(x.numel(), META["BLOCK"]),)](x, out, x.numel(), BLOCK=64)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return scale(torch.randn(1000, device=dev))
