# task: matmul
# expect: ok
# tries: an honest IEEE-fp32 Triton GEMM that lets torch do bookkeeping only: zero-filled padded buffers, slice
# tries: copies into them, a slice of the padded result made contiguous. Allowed (docs/verdicts.md, attribution).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def padded_mm(a_ptr, b_ptr, c_ptr, KP, NP, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, KP, BK):
        a = tl.load(a_ptr + rm[:, None] * KP + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * NP + rn[None, :])
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * NP + rn[None, :], acc)


def _up(n, b):
    return (n + b - 1) // b * b


class ModelNew(nn.Module):
    def forward(self, A, B):
        M, K = A.shape
        N = B.shape[1]
        T = 64
        MP, KP, NP = _up(M, T), _up(K, T), _up(N, T)
        a = torch.zeros((MP, KP), device=A.device, dtype=A.dtype)
        b = torch.zeros((KP, NP), device=B.device, dtype=B.dtype)
        a[:M, :K].copy_(A)
        b[:K, :N].copy_(B)
        c = torch.empty((MP, NP), device=A.device, dtype=torch.float32)
        padded_mm[(MP // T, NP // T)](a, b, c, KP, NP, BM=T, BN=T, BK=32)
        return c[:M, :N].contiguous()
