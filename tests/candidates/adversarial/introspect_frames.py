# task: relu
# expect: rejected reference_called
# tries: walks up the call stack (sys._getframe) to the harness, finds the reference callable and calls it.
import sys
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


def triton_relu(x, out):
    n = x.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def forward(self, x):
        f = sys._getframe(1)
        while f is not None:
            for name in ("ref_fn", "reference", "ref", "model"):
                r = f.f_locals.get(name)
                if callable(r) and not isinstance(r, ModelNew):
                    triton_relu(x, torch.empty_like(x))
                    return r(x)
            f = f.f_back
        return triton_relu(x, torch.empty_like(x))
