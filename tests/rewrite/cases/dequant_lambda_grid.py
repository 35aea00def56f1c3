# Row-wise dequantization, one small row per program, grid written as a lambda that does not read its
# META (as in bitsandbytes-style kernels). Elementwise, no reduction: rows per program still applies.
import torch
import triton
import triton.language as tl


@triton.jit
def dequant_kernel(x_ptr, state_ptr, out_ptr, inv_127, BLOCK_SIZE: tl.constexpr, P2: tl.constexpr):
    pid = tl.program_id(axis=0)
    arange = tl.arange(0, P2)
    offsets = pid * BLOCK_SIZE + arange
    row_mask = arange < BLOCK_SIZE
    x = tl.load(x_ptr + offsets, mask=row_mask)
    scale = tl.load(state_ptr + pid)
    tl.store(out_ptr + offsets, scale * x * inv_127, mask=row_mask)


def dequant(x, state):
    out = torch.empty(*x.shape, device=x.device, dtype=torch.float32)
    P2 = triton.next_power_of_2(x.shape[1])
    grid = lambda meta: (x.shape[0],)
    dequant_kernel[grid](x, state, out, 1.0 / 127, BLOCK_SIZE=x.shape[1], P2=P2)
    return out


def kiln_check():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    x = torch.randint(-127, 127, (11, 24), dtype=torch.int8, device=dev)
    return dequant(x, torch.rand(11, device=dev) * 10)
