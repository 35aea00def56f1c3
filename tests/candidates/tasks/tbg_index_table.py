import torch
import triton
import triton.language as tl

# kiln test task (TritonBench-G format): the test function below the separator allocates its index table with
# torch.empty and fills only part of it, as TritonBench-G's context_attn_llama does (its authors saw fresh
# cudaMalloc memory, zeros). The worker zero-fills integer tensors the harness allocates, so every index is
# in range; the module's own allocations (above the separator) stay poisoned. Used by
# tests/worker/test_harness_allocations.py.


@triton.jit
def gather_kernel(x_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + i, mask=mask, other=0.0), mask=mask)


def gather(x, idx):
    out = torch.empty(idx.shape, dtype=x.dtype, device=x.device)
    n = idx.numel()
    gather_kernel[(triton.cdiv(n, 64),)](x, idx, out, n, BLOCK=64)
    return out
##################################################################################################################################################


def test_gather():
    def table(n):   # a nested helper allocates: still the harness
        return torch.empty((n,), dtype=torch.int32, device="cuda")

    x = torch.randn(512, device="cuda")
    idx = table(1024)
    idx[:256] = torch.randint(0, 512, (256,), dtype=torch.int32, device="cuda")
    counts = torch.empty((4,), dtype=torch.int64, device="cuda")   # never written: zeros
    return {"out": gather(x, idx), "counts": counts, "used": torch.empty((2,), dtype=torch.bool, device="cuda")}


result_gold = test_gather()
