# task: kiln:tests/worker/data/scatter_race
# expect: ok
# needs: race-probe
# tries: the in-place racing scatter of the kiln-format task with its programs taken in the opposite order: its
#        changes to `out` differ from the reference's on the raced slots only, which the race probe shows.
import torch
import triton
import triton.language as tl


@triton.jit
def scatter_kernel(x_ptr, dest_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = (tl.num_programs(0) - 1 - tl.program_id(0)) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(dest_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + d, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0, mask=mask)


def scatter_race(x, dest, out):
    n = x.numel()
    scatter_kernel[(triton.cdiv(n, 16),)](x, dest, out, n, BLOCK=16)
