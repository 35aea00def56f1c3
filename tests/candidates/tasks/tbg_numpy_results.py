import torch
import triton
import triton.language as tl

# kiln test task (TritonBench-G format): the test function below the separator returns its results as
# numpy arrays (`.cpu().numpy()`), as TritonBench-G's pow_scalar_tensor and bmm_optimized do. Those
# conversions are the harness's, not the candidate's: they must not count as host_compute. Used by
# tests/worker/test_host_compute.py.


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
##################################################################################################################################################


def test_scale():
    x = torch.randn(8192, device="cuda")
    return {"test_case_1": scale(x).cpu().numpy(), "test_case_2": scale(x[:5000]).tolist()}


result_gold = test_scale()
