# task: tbg_scatter_race
# expect: mismatch value_mismatch
# needs: race-probe
# tries: as honest/scatter_race_reversed_ok.py, and slot 40 (written once: the reference determines it) is off;
#        the race probe must not excuse a slot no race touches.
import torch
import triton
import triton.language as tl


@triton.jit
def scatter_kernel(x_ptr, dest_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.num_programs(0) - 1 - tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(dest_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + d, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0 + tl.where(d == 40, 1.0, 0.0), mask=mask)


def scatter(x, dest, out):
    n = x.numel()
    scatter_kernel[(triton.cdiv(n, 16),)](x, dest, out, n, BLOCK=16)
    return out
