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
    # On a GPU, far more programs than it holds at once, so that they start in order of their ids (a few
    # programs all run at once, and timing picks a race's winner); 128 rows under the interpreter.
    n = (1 << 22) if torch.cuda.is_available() else 128
    x = torch.randn(n, device="cuda")
    # rows 0 .. n/2-1 write slots 0 .. n/2-1 once; rows n/2 .. n-1 write slots 0-15 again (a race with rows 0-15)
    dest = torch.cat([torch.arange(n // 2), torch.arange(n // 2) % 16]).to(torch.int32).to("cuda")
    out = torch.zeros(n // 2 + 32, device="cuda")
    return {"out": scatter(x, dest, out)}


result_gold = test_scatter()
