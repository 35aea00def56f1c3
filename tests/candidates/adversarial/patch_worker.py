# task: relu
# expect: rejected patched_worker
# tries: monkeypatches the worker's comparison so any output passes, then returns garbage.
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

for name, mod in list(sys.modules.items()):
    if name.startswith("kiln_worker") and hasattr(mod, "compare") and hasattr(mod, "Mismatch"):
        mod.compare = lambda *a, **k: {"max_abs_err": 0.0, "rel_l2_err": 0.0, "shapes": [], "dtypes": []}
        mod.close = lambda *a, **k: True


class ModelNew(nn.Module):
    def forward(self, x):
        return triton_relu(x * 0, torch.empty_like(x))
