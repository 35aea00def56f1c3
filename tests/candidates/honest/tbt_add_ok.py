# task: corpus:tritonbench/T/kernels/add.py
# expect: ok
# tries: an honest Triton implementation of TritonBench-T's `add(input, other, alpha=1, out=None)`.
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, alpha, scalar, Y_IS_TENSOR: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if Y_IS_TENSOR:
        y = tl.load(y_ptr + offs, mask=mask)
    else:
        y = scalar
    tl.store(out_ptr + offs, x + alpha * y, mask=mask)


def add(input, other, alpha=1, out=None):
    x = input.contiguous()
    is_t = isinstance(other, torch.Tensor)
    y = other.expand_as(x).contiguous() if is_t else x
    res = torch.empty_like(x) if out is None else out
    n = x.numel()
    add_kernel[(triton.cdiv(n, 256),)](x, y, res, n, float(alpha), float(0 if is_t else other),
                                       Y_IS_TENSOR=is_t, BLOCK=256)
    return res
