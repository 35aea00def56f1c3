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
def big_smem(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A pipelined K loop of 128x128x128 fp16 tiles: 64 KiB of shared memory per stage, so 6 stages need
    # well over the 227 KiB a block may have on an H100/H200. (It compiles in seconds: a single 256x512
    # fp32 dot without a loop, tried first, took the ptxas past the 20 s limit.)
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


class ModelNew(nn.Module):
    def forward(self, x):
        BM, BN, BK, K = 128, 128, 128, 1024
        a = torch.zeros(BM, K, device=x.device, dtype=torch.float16)
        b = torch.zeros(K, BN, device=x.device, dtype=torch.float16)
        c = torch.empty(BM, BN, device=x.device, dtype=torch.float32)
        big_smem[(1,)](a, b, c, K, BM=BM, BN=BN, BK=BK, num_stages=6)
        return torch.relu(x)
