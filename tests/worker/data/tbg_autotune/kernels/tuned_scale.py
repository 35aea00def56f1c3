import torch
import triton
import triton.language as tl


def _prune(configs, named_args, **kwargs):
    # called by Triton's autotuner once per tuning (a key it has no pick for): the test counts these lines
    print(f"kiln-test-tuning n={named_args['n']}")
    return configs


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


def tuned_scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    _scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


##################################################################################################################################################
def test_tuned_scale():
    return {"out": tuned_scale(torch.arange(128, dtype=torch.float32))}
