# task: relu
# timeout_s: 4
# expect: timeout timeout
# tries: a kernel that never ends (a device-side infinite loop; a Python loop under the interpreter).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def spin(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # A loop without side effects may be deleted by the compiler (LLVM assumes forward progress: seen
    # on an H200, where such a kernel returned at once). A volatile load each iteration keeps it.
    i = 0.0
    while i < 1.0:
        i = tl.load(x_ptr, volatile=True) * 0.0
    tl.store(out_ptr, i)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        spin[(1,)](x, out, x.numel(), BLOCK=128)
        return out
