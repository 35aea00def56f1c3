# A chunk size that host code also uses: it sizes the partial-sums buffer (NT) that a second kernel
# reads. Editing CHUNK for the first kernel alone would change more than that kernel.
import torch
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, part_ptr, n, CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def total_kernel(part_ptr, out_ptr, nt, BLOCK_NT: tl.constexpr):
    offs = tl.arange(0, BLOCK_NT)
    p = tl.load(part_ptr + offs, mask=offs < nt, other=0.0)
    tl.store(out_ptr, tl.sum(p, axis=0))


def total(x):
    n = x.numel()
    CHUNK = 64
    NT = triton.cdiv(n, CHUNK)
    part = torch.empty(NT, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    partial_sum_kernel[(NT,)](x, part, n, CHUNK=CHUNK)
    total_kernel[(1,)](part, out, NT, BLOCK_NT=triton.next_power_of_2(NT))
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return total(torch.randn(1000, device=dev))
