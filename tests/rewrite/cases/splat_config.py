# Block sizes that reach the launch through `**config.kwargs` (a config object the caller passes, as
# int_scaled_matmul's wrapper does): there is no text of their own to edit, and rebinding `config` to a
# number would break the wrapper, so they stay fixed; launch options written out stay tunable.
import torch
import triton
import triton.language as tl


class Config:
    def __init__(self, num_warps=4, **kwargs):
        self.num_warps = num_warps
        self.kwargs = kwargs


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def scale(x, config):
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META["BLOCK"]),)
    scale_kernel[grid](x, y, n, num_warps=config.num_warps, **config.kwargs)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return scale(torch.randn(1000, device=dev), Config(num_warps=2, BLOCK=128))
