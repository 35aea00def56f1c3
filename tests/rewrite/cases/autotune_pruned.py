# An autotuned kernel that prunes its own configs (prune_configs_by): kiln cannot pin measured shapes
# there (its pinning is a prune of its own), so a per-shape autotune with pins is refused.
import torch
import triton
import triton.language as tl


def _keep_small(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK_SIZE"] <= max(64, named_args["n_elements"])]


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE': 64}, num_warps=2),
        triton.Config({'BLOCK_SIZE': 256}, num_warps=4),
    ],
    key=['n_elements'],
    prune_configs_by={'early_config_prune': _keep_small},
)
@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def scale(x: torch.Tensor):
    out = torch.empty_like(x)
    n = out.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)](x, out, n)
    return out
