# task: tbg_scatter_race
# expect: ok
# needs: race-probe
# tries: the racing scatter with its programs taken in the opposite order (as a kernel that schedules its work
#        otherwise does on a GPU): the other writer wins each raced slot. The reference's reruns agree with one
#        another, so only kiln's race probe (the reference with its programs reversed) shows those slots as
#        undetermined; every other slot is still compared.
import torch
import triton
import triton.language as tl


@triton.jit
def scatter_kernel(x_ptr, dest_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.num_programs(0) - 1 - tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(dest_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + d, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0, mask=mask)


def scatter(x, dest, out):
    n = x.numel()
    scatter_kernel[(triton.cdiv(n, 16),)](x, dest, out, n, BLOCK=16)
    return out
