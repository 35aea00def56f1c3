# task: relu
# gpu-only: true
# expect: compile_error out_of_resources
# tries: a kernel whose shared memory exceeds the per-block limit (Triton raises OutOfResources at launch).
#        Under the interpreter there is no shared memory, so this one runs only on a GPU.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def big_smem(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


class ModelNew(nn.Module):
    def forward(self, x):
        BM, BN, BK = 256, 256, 512
        a = torch.zeros(BM, BK, device=x.device, dtype=torch.float32)
        b = torch.zeros(BK, BN, device=x.device, dtype=torch.float32)
        c = torch.empty(BM, BN, device=x.device, dtype=torch.float32)
        big_smem[(1,)](a, b, c, BM=BM, BN=BN, BK=BK, num_stages=4)
        return torch.relu(x)
