# task: relu
# expect: rejected introspection
# tries: finds the reference's output of an earlier trial in memory (gc) and returns it as its own. The worker
# no longer keeps earlier outputs alive (issue 14's memory budget: weak references only), so there is none to
# find; walking gc.get_objects is introspection either way (output_aliases_reference still guards the rest).
import gc
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

_mine = set()


class ModelNew(nn.Module):
    def forward(self, x):
        for o in gc.get_objects():
            if (isinstance(o, torch.Tensor) and o is not x and id(o) not in _mine and o.shape == x.shape
                    and o.dtype == x.dtype and bool((o >= 0).all())):
                return o
        out = triton_relu(x, torch.empty_like(x))
        _mine.add(id(out))
        return out
