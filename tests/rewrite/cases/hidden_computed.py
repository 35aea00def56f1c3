# Block sizes a wrapper computes from the input's shape. rowsum() steps over each row in chunks of
# BLOCK = min(next_power_of_2(n_cols), 64) (any chunk size gives the same sums), with num_stages
# computed at the launch. rowmax() covers a row in one block of next_power_of_2(n_cols): a smaller
# block would drop columns, so it stays fixed.
import torch
import triton
import triton.language as tl


@triton.jit
def rowsum_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def rowmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(y_ptr + row, tl.max(x, axis=0))


def rowsum(x):
    n_rows, n_cols = x.shape
    y = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    BLOCK = min(triton.next_power_of_2(n_cols), 64)
    rowsum_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=BLOCK, num_stages=2 if n_cols > 1024 else 1)
    return y


def rowmax(x):
    n_rows, n_cols = x.shape
    y = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    rowmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    return y


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randn(37, 300, device=dev)
    return rowsum(x), rowmax(x)
