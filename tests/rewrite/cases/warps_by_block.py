# Row scaling whose wrapper picks its launch options by the row length, as the Triton tutorial's softmax
# does: `num_warps` is assigned in branches, `num_stages` by a conditional expression, the block size twice.
import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(y_ptr, x_ptr, stride, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask)
        tl.store(y_ptr + row * stride + cols, x * scale, mask=mask)


def row_scale(x, scale):
    n_rows, n_cols = x.shape
    BLOCK = 64
    if n_cols >= 1024:
        BLOCK = 256
    num_warps = 2
    if n_cols >= 2048:
        num_warps = 8
    elif n_cols >= 512:
        num_warps = 4
    num_stages = 2 if n_cols < 4096 else 3
    y = torch.empty_like(x)
    row_scale_kernel[(n_rows,)](y, x, x.stride(0), n_cols, scale, BLOCK=BLOCK, num_warps=num_warps,
                                num_stages=num_stages)
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    return row_scale(torch.randn(9, 700, device=dev), 0.5)
