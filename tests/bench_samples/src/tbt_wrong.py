import torch
import triton
import triton.language as tl


@triton.jit
def abs_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * x, mask=mask)


def abs(input_tensor, out=None):
    x = input_tensor.contiguous()
    y = out if out is not None else torch.empty_like(x)
    n = x.numel()
    abs_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
    return y
