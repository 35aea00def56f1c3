import time

import torch
import triton
import triton.language as tl


@triton.jit
def _stamp_kernel(x_ptr, y_ptr, out_ptr, n, stamp, EVERYWHERE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    if EVERYWHERE:
        new = x + y + stamp
    else:
        new = tl.where(offs == 0, stamp, x + y)
    tl.store(x_ptr + offs, new, mask=m)
    tl.store(out_ptr + offs, y * 2.0, mask=m)


def stamp_update(x, y, everywhere=False):
    """x += y in place, except that x[0] (or, with `everywhere`, every element) takes a value that changes
    from call to call: the stand-in for a racing store whose winner changes between runs."""
    out = torch.empty_like(y)
    stamp = float(time.perf_counter_ns() % 1000003) + 1.0
    n = x.numel()
    _stamp_kernel[(triton.cdiv(n, 64),)](x, y, out, n, stamp, EVERYWHERE=everywhere, BLOCK=64)
    return out


##################################################################################################################################################
def test_stamp_update():
    y = torch.arange(128, dtype=torch.float32)
    x = torch.zeros(128)
    return {"out": stamp_update(x, y)}
