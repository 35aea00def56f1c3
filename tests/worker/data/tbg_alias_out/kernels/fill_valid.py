import torch
import triton
import triton.language as tl

LAUNCH = True   # the test's lazy candidate sets it False: it writes nothing


@triton.jit
def _fill_kernel(x_ptr, o_ptr, n_valid, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_valid
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def fill_valid(x, o, n_valid):
    """o[:n_valid] = 2 * x[:n_valid] in place, the rest of o as given (n_valid = 0: o is left alone, as
    context_attn_fwd's perf harness leaves its `o` when its prompt-cache length exceeds every sequence)."""
    if LAUNCH:
        _fill_kernel[(max(1, triton.cdiv(n_valid, 1024)),)](x, o, n_valid, BLOCK=1024)


##################################################################################################################################################
def test_fill_valid():
    x = torch.arange(256, dtype=torch.float32)
    o = torch.zeros(256)
    fill_valid(x, o, 100)
    return {"o": o}
