# task: relu
# gpu-only: true
# mode: time
# expect: rejected timed_output_mismatch
# tries: honest for its first calls (the check stage), then, once it is called over and over (timing),
#        computes once per input address and returns a copy of that result after a token kernel. The
#        inputs of a timed case stay at one address, so without a change of their values between rounds
#        every timed output would still be right.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def triton_relu(x, out):
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


_calls = [0]
_cache = {}


class ModelNew(nn.Module):
    def forward(self, x):
        _calls[0] += 1
        if _calls[0] <= 40:
            return triton_relu(x, torch.empty_like(x))
        key = (x.data_ptr(), tuple(x.shape))
        if key not in _cache:
            _cache[key] = triton_relu(x, torch.empty_like(x))
        out = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](_cache[key], out, n, BLOCK=1024)  # a copy, not the relu
        return out
