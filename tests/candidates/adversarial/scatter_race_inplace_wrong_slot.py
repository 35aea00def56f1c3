# task: kiln:tests/worker/data/scatter_race
# expect: mismatch input_side_effect_mismatch
# needs: race-probe
# tries: as honest/scatter_race_inplace_ok.py, with slot 50 (written once) off: still a mismatch.
import torch
import triton
import triton.language as tl


@triton.jit
def scatter_kernel(x_ptr, dest_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = (tl.num_programs(0) - 1 - tl.program_id(0)) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(dest_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + d, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0 + tl.where(d == 50, 1.0, 0.0), mask=mask)


def scatter_race(x, dest, out):
    n = x.numel()
    scatter_kernel[(triton.cdiv(n, 16),)](x, dest, out, n, BLOCK=16)
