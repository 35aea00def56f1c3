import torch
import triton
import triton.language as tl

# kiln test task (TritonBench-G format): a scatter whose destination indices repeat, so two programs store
# different values to one slot and the last writer wins (TritonBench-G's destination-index copies draw their
# indices with randint, as here). Programs run in order of their ids under Triton's interpreter, and nearly so on
# a GPU: reruns of the reference agree, while a candidate that orders its programs otherwise picks the other
# writer. Used by tests/worker/test_race_probe.py.


@triton.jit
def scatter_kernel(x_ptr, dest_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(dest_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + d, tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0, mask=mask)


def scatter(x, dest, out):
    n = x.numel()
    scatter_kernel[(triton.cdiv(n, 16),)](x, dest, out, n, BLOCK=16)
    return out
##################################################################################################################################################


def test_scatter():
    x = torch.randn(128, device="cuda")
    # rows 0-63 write slots 0-63 once; rows 64-127 write slots 0-15 again (a race with rows 0-15)
    dest = torch.cat([torch.arange(64), torch.arange(64) % 16]).to(torch.int32).to("cuda")
    out = torch.zeros(96, device="cuda")
    return {"out": scatter(x, dest, out)}


result_gold = test_scatter()
