import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(in_ptr0, in_ptr1, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(in_ptr0 + offsets, mask=mask)
    y = tl.load(in_ptr1 + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add_wrapper(x, y):
    out = torch.empty_like(x)
    n_elements = x.numel()
    add_kernel[(triton.cdiv(n_elements, 128),)](x, y, out, n_elements, BLOCK_SIZE=128)
    return out
