import torch
import triton
import triton.language as tl

# kiln test task (kiln format): scatter_race(x, dest, out) stores 2 * x[i] into out[dest[i]] in place; the
# bench's destination indices repeat (a race: the last writer wins). Used by tests/worker/test_race_probe.py.


@triton.jit
def scatter_kernel(x_ptr, dest_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(dest_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + d, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0, mask=mask)


def scatter_race(x, dest, out):
    n = x.numel()
    scatter_kernel[(triton.cdiv(n, 16),)](x, dest, out, n, BLOCK=16)
