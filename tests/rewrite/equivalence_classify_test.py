#!/usr/bin/env python3
"""Unit test of bench/gpu/rewrite_equivalence.py's verdicts (no GPU), on what an H100 showed.

- num_ctas=2 variants that Triton 3.6 fails to compile (TritonGPUPlanCTAPass, 'nvvm.mapa') are
  `variant_unsupported`, other compile failures stay `variant_error`.
- layer_norm_welfold's pipeline_loop variant differed from the original only because the autotuner
  picked RBLOCK=1024 in one run and 2048 in the other (the kernel sums masked-out lanes, so its result
  depends on RBLOCK): `autotune_pick`, unless the request edits that kernel's configs.
- fused_recurrent_delta's original reads the stride-0 gradients of `.sum()` as contiguous buffers:
  two runs in one process differ, so the original is unstable.
Exit 77 when torch is missing (CTest skip).
"""
import os
import sys

try:
    import torch
except Exception as e:  # pragma: no cover
    print(f"skip: torch not importable with {sys.executable}: {e}")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "gpu"))
import rewrite_equivalence as eq  # noqa: E402

failures = []


def check(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")


# Variant failures.
check("num_ctas compile failure", eq.classify_failure("RuntimeError: PassManager::run failed", "set_params num_ctas=2"),
      "variant_unsupported")
check("other compile failure", eq.classify_failure("RuntimeError: PassManager::run failed", "set_params BLOCK_M=64"),
      "variant_error")
check("num_ctas=1", eq.classify_failure("RuntimeError: PassManager::run failed", "set_params num_ctas=1"),
      "variant_error")
check("num_ctas runtime error", eq.classify_failure("RuntimeError: CUDA error: an illegal memory access",
                                                    "set_params num_ctas=2"), "variant_error")
check("resource", eq.classify_failure("triton.runtime.errors.OutOfResources: out of resource: shared memory",
                                      "set_params BLOCK_M=256"), "variant_resource")

# Results that differ with the autotuner's pick.
K = "triton_red_fused_native_layer_norm_no_welford"
key = "(1, 1, 'torch.float32')"
orig = {"test_case_4": [torch.tensor([[0.8945]]), torch.tensor([[0.0247085]])]}
var = {"test_case_4": [torch.tensor([[0.8945]]), torch.tensor([[0.0349516]])]}
po = [{K: {key: "XBLOCK: 1, RBLOCK: 2048, num_warps: 8"}}]
pv = [{K: {key: "XBLOCK: 1, RBLOCK: 1024, num_warps: 8"}}]
v, why = eq.classify_results(orig, var, po, pv, K, "pipeline_loop num_stages=3")
check("pipeline_loop, different pick", v, "autotune_pick")
check("detail names the picks", "RBLOCK: 2048" in why and "RBLOCK: 1024" in why, True)
check("set_params of that kernel, different pick", eq.classify_results(orig, var, po, pv, K, "set_params num_warps=16")[0],
      "mismatch")
check("set_params of another kernel, different pick",
      eq.classify_results(orig, var, po, pv, "other_kernel", "set_params num_warps=16")[0], "autotune_pick")
check("same pick", eq.classify_results(orig, var, po, po, K, "pipeline_loop num_stages=3")[0], "mismatch")
check("no picks recorded", eq.classify_results(orig, var, [], [], K, "pipeline_loop num_stages=3")[0], "mismatch")
check("equal", eq.classify_results(orig, orig, po, pv, K, "pipeline_loop num_stages=3"), ("equal", ""))

# The original's own runs.
a = {"test_case_1": {"grad_q": 9721898.0}}
b = {"test_case_1": {"grad_q": 11044443389952.0}}
why = eq.judge_original(a, b, a, [{}, {}])
check("in-process runs differ", "two runs in one process" in why, True)
check("runs agree", eq.judge_original(a, a, a, [{}, {}]), "")
check("other process differs", eq.judge_original(a, a, b, [{}, {}]) != "", True)
check("other process failed", eq.judge_original(a, a, None, [{}, {}], "timeout"), "timeout")
why = eq.judge_original(orig, var, orig, [po[0], pv[0]])
check("in-process picks named", "autotuner picks differ" in why, True)

# --skip-done: the labels of an earlier log's verdict rows (not its notes or counts).
import tempfile  # noqa: E402
with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as fh:
    fh.write("519 variants, 12 jobs\n"
             "note: fast_ce_loss.py: FAIL _chunked_cross_entropy_forward set_params num_warps=64: out of range\n"
             "equal            add_example__add_kernel__set_params                          \n"
             "mismatch         flash_attn___fwd_kernel__set_params                      result['test_case_1']: 4.7\n"
             "original_unstable decay_cumsum__k__pipeline_loop unstable: x\n")
check("done labels", eq.done_labels([fh.name]),
      {"add_example__add_kernel__set_params", "flash_attn___fwd_kernel__set_params", "decay_cumsum__k__pipeline_loop"})
os.unlink(fh.name)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: rewrite_equivalence verdicts")
