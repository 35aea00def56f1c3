"""Attribution of the work (who computed), dot precision, the tolerance protocols, the task's memory footprint,
TritonBench modules that import themselves by name and the scratch working directory (issue 14)."""
import os
import sys

import pytest

from workerproc import CANDIDATES, CORPUS, REPO, codes, eval_request

sys.path.insert(0, os.path.join(REPO, "worker"))


def _cand(suite, name):
    return os.path.join(CANDIDATES, suite, name + ".py")


def test_own_share_and_footprint_of_an_honest_candidate(fork_worker):
    r = fork_worker.request(eval_request(_cand("honest", "relu_views_ok")))
    assert r["verdict"] == "ok", r.get("reasons")
    a = r["attribution"]
    assert a["method"] == "dispatcher" and a["own_share"] == 1.0 and a["foreign_compute_ops"] == 0
    assert r["protocol"] == "kernelbench"
    # relu task: one 16 x 256 fp32 input and one output of the same size
    assert r["memory"]["footprint_bytes"] == 2 * 16 * 256 * 4


def test_foreign_share_names_the_ops(fork_worker):
    r = fork_worker.request(eval_request(_cand("adversarial", "softmax_decomposed")))
    assert r["verdict"] == "rejected" and codes(r)[0] == "torch_compute"
    a = r["attribution"]
    assert a["own_share"] < 0.5 and a["foreign_ops"].get("aten::exp", 0) >= 1
    assert "exp" in r["message"] and "%" in r["message"]


def test_legacy_protocol_allows_what_kernelbench_rejects(fork_worker):
    req = eval_request(_cand("adversarial", "fp16_dot_fp32"))
    r = fork_worker.request(req)
    assert r["verdict"] == "rejected" and "reduced_precision" in codes(r)
    assert r["precision"] == {"candidate_dots": "fp16", "task": "ieee", "reduced": True}
    req["protocol"] = "legacy"
    r = fork_worker.request(req)
    # 1e-2 everywhere: the fp16 products pass; the lowered precision is still reported, as a warning
    assert r["verdict"] == "ok", r.get("reasons")
    assert r["protocol"] == "legacy" and "reduced_precision_allowed" in codes(r)


def test_unknown_protocol_is_a_clear_error(fork_worker):
    req = eval_request(_cand("honest", "relu_ok"))
    req["protocol"] = "kernelbnch"
    r = fork_worker.request(req)
    assert not r["ok"] and "unknown protocol 'kernelbnch'" in r["error"]


def test_trusted_policy_keeps_torch_compute_a_warning(fork_worker):
    req = eval_request(_cand("adversarial", "relu_mul_mask"))
    req["policy"] = "trusted"
    r = fork_worker.request(req)
    assert r["verdict"] == "ok" and "torch_compute" in codes(r)


T = os.path.join(CORPUS, "tritonbench", "T", "kernels")

TANH_LINEAR = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _tanh_linear_rows(x_ptr, w_ptr, b_ptr, out_ptr, N, K, HAS_BIAS: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
    m = tl.program_id(0)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    x = tl.load(x_ptr + m * K + k, mask=k < K, other=0.0)
    w = tl.load(w_ptr + n[:, None] * K + k[None, :], mask=(n[:, None] < N) & (k[None, :] < K), other=0.0)
    acc = tl.sum(w * x[None, :], axis=1)
    if HAS_BIAS:
        acc += tl.load(b_ptr + n, mask=n < N, other=0.0)
    e = tl.exp(2.0 * acc)
    tl.store(out_ptr + m * N + n, (e - 1.0) / (e + 1.0), mask=n < N)


def tanh_linear(input, weight, bias=None):
    x = input.contiguous().view(-1, input.shape[-1])
    w = weight.contiguous()
    out = torch.empty((x.shape[0], w.shape[0]), device=x.device, dtype=torch.float32)
    _tanh_linear_rows[(x.shape[0],)](x, w, bias if bias is not None else w, out, w.shape[0], x.shape[1],
                                     HAS_BIAS=bias is not None, BN=triton.next_power_of_2(w.shape[0]),
                                     BK=triton.next_power_of_2(x.shape[1]))
    return out.view(*input.shape[:-1], w.shape[0])
'''


@pytest.mark.skipif(not os.path.isfile(os.path.join(T, "tanh_linear.py")), reason="corpus not present")
def test_tritonbench_t_module_that_imports_itself_loads(fork_worker):
    """tanh_linear's test does `from tanh_linear import tanh_linear`: the reference's test gets the reference,
    the candidate's test the candidate (not the other's, not a ModuleNotFoundError)."""
    spec = {"format": "tritonbench_t", "name": "tanh_linear", "path": os.path.join(T, "tanh_linear.py"),
            "entry": "tanh_linear"}
    r = fork_worker.request({"op": "eval", "task": spec, "candidate": {"source": TANH_LINEAR, "name": "c.py"},
                             "mode": "check", "trials": 1, "limits": {"timeout_s": 60}}, timeout=120)
    assert r["ok"] and r["verdict"] == "ok", (r.get("reasons"), r.get("stderr_tail", "")[-600:])
    assert not r["runtime_checks"]["reference_called"] and r["runtime_checks"]["triton_launches"] > 0


def test_a_reference_that_writes_files_writes_them_in_a_scratch_directory(fork_worker, tmp_path):
    task = tmp_path / "writes.py"
    probe = "kiln_scratch_probe_14.txt"
    task.write_text(open(os.path.join(CANDIDATES, "tasks", "relu.py")).read().replace(
        "        return torch.relu(x)\n",
        f"        open({probe!r}, 'w').write('x')\n        return torch.relu(x)\n"))
    req = eval_request(_cand("honest", "relu_ok"))
    req["task"] = {"format": "kernelbench", "name": "writes", "path": str(task)}
    r = fork_worker.request(req)
    assert r["verdict"] == "ok", r.get("reasons")
    assert not os.path.exists(os.path.join(REPO, probe)) and not os.path.exists(probe)


# ---- units: TTIR dot precision, profiler attribution, chunked comparison ----

def test_dot_precision_from_ttir():
    from kiln_worker import attribution as at
    ttir = {
        "default": "%c = tt.dot %a, %b, %c0, inputPrecision = tf32 : tensor<64x64xf32> * tensor<64x64xf32> -> t",
        "bf16": "%c = tt.dot %a, %b, %c0, inputPrecision = tf32 : tensor<64x64xbf16> * tensor<64x64xbf16> -> t",
        "tf32x3": "%c = tt.dot %a, %b, %c0, inputPrecision = tf32x3 : tensor<64x64xf32> * tensor<64x64xf32> -> t",
        "ieee": "%c = tt.dot %a, %b, %c0 : tensor<64x64xf32> * tensor<64x64xf32> -> tensor<64x64xf32>",
        "fp8": "%c = tt.dot %a, %b, %c0 : tensor<64x64xf8E4M3FN> * tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>",
    }
    got = {k: at.dots_from_ttir(v) for k, v in ttir.items()}
    assert got == {"default": ["tf32"], "bf16": ["bf16"], "tf32x3": ["tf32x3"], "ieee": ["ieee"], "fp8": ["fp8"]}
    assert at.dots_from_ttir("%x = arith.addf %a, %b : tensor<64xf32>") == []


class _Ev:
    def __init__(self, cand, ref):
        from kiln_worker.verdicts import Reasons
        self.cand_traces, self.ref_traces, self.reasons = cand, ref, Reasons("strict")


def _trace(kernels):
    from kiln_worker import attribution as at
    t = at.Trace()
    t.kernels = kernels
    return t


def test_profiler_attribution_counts_own_launches_and_names_foreign_kernels():
    from collections import Counter
    from kiln_worker import attribution as at
    mm = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"
    # a token kernel named like the foreign one: only as many launches as the worker saw count as own
    cand = [("c", _trace([("copy_k", 10.0), (mm, 80.0), ("void at::native::vectorized_elementwise_kernel<4, "
                                                        "at::native::FillFunctor<float>>(int)", 5.0)]),
             Counter({"copy_k": 1}))]
    ev = _Ev(cand, [None])
    rec = at.judge_profile(ev)
    assert rec["own_share"] == round(10 / 95, 4) and rec["allowed_ms"] == 0.005
    assert rec["own_share_of_compute"] == round(10 / 90, 4)
    assert rec["foreign_kernels"][0]["name"] == "cutlass::Kernel2"
    assert [r["code"] for r in ev.reasons.items] == ["foreign_kernel"] and "84%" in ev.reasons.items[0]["message"]
    # the same foreign kernel launched by a Triton reference (TritonBench-G wrappers) is the task's own
    ev = _Ev(cand, [_trace([("copy_k", 9.0), (mm, 70.0)])])
    assert at.judge_profile(ev)["foreign_ms"] == 0 and not ev.reasons.items


def test_an_autotuners_timing_runs_of_the_candidates_kernel_are_its_own():
    """A candidate autotuned at a new key tunes inside its first call: the profiler sees every timing run of
    its kernel, the worker records only the launch that returns (session 25: logsumexp_fwd's rows-per-program
    rewrite, still @triton.autotune, was rejected as 76% foreign work). Timing runs of candidate kernels count
    as own; another module's kernel timed by an autotuner does not."""
    from collections import Counter
    from kiln_worker import attribution as at
    from kiln_worker.platform import LaunchLog
    log = LaunchLog()
    log.append({"name": "lse_kernel", "own": True})
    before = len(log.launches)
    log.bench_launches["lse_kernel"] += 3          # an earlier call's tuning: not this call's
    bench_before = Counter(log.bench_launches)
    log.append({"name": "lse_kernel", "own": True})
    log.append({"name": "helper_from_torch", "own": False})
    log.bench_launches["lse_kernel"] += 40
    names = log.own_names_since(before, bench_before)
    assert names == Counter({"lse_kernel": 41})
    fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>>(int)"
    kernels = [("lse_kernel", 2.0)] * 40 + [(fill, 30.0)] * 20 + [("lse_kernel", 2.0)]
    ev = _Ev([("c", _trace(kernels), names)], [None])
    rec = at.judge_profile(ev)
    assert rec["foreign_ms"] == 0 and not ev.reasons.items
    # counted as before (recorded launches only), the timing runs are foreign and the candidate rejected
    ev = _Ev([("c", _trace(kernels), Counter({"lse_kernel": 1}))], [None])
    at.judge_profile(ev)
    assert [r["code"] for r in ev.reasons.items] == ["foreign_kernel"]


def test_chunked_comparison_equals_the_whole():
    import torch
    from kiln_worker import compare, guards
    g = torch.Generator().manual_seed(0)
    r = torch.randn(1000, generator=g) * 30
    c = r + torch.randn(1000, generator=g) * 1e-6
    c[17] += 0.2
    c[900] += 0.2
    whole = []
    for chunk in (1 << 24, 7):
        compare.CHUNK = chunk
        try:
            compare.compare(c, r)
        except compare.Mismatch as m:
            whole.append(str(m))
        st = compare.compare(c, r, tf32=True)   # RMS-scaled atol over all chunks: 1e-2 * ~30
        whole.append(round(st["max_abs_err"], 6))
        p = r.clone()
        guards.poison_fill(p[:0])  # no-op on empty
        p.view(torch.int32)[5] = 0x7FC0DEAD
        try:
            compare.compare(p, r)
        except compare.Mismatch as m:
            whole.append(m.code)
    compare.CHUNK = 1 << 24
    assert whole[:3] == whole[3:] and "2 of 1000 elements" in whole[0] and whole[2] == "uninitialized_output"


def test_history_holds_outputs_only_weakly():
    import gc
    import torch
    from kiln_worker import memory
    h = memory.History()
    kept = torch.zeros(100)            # still held by "the candidate"
    h.append([kept])
    view_kept = torch.zeros(10, 10)    # the candidate keeps the memory through another view
    other_view = view_kept.view(100)
    h.append(view_kept)
    h.append(torch.zeros(100))         # held by nobody: freed, no longer compared
    del view_kept
    gc.collect()
    starts = sorted(r[0] for _, r in h.storages())
    assert starts == sorted([kept.data_ptr(), other_view.data_ptr()])
    assert h.last_numel == 100
    del kept, other_view
    gc.collect()
    assert h.storages() == []          # nothing held by the history itself


@pytest.mark.skipif(not os.path.isdir(os.path.join(CORPUS, "tritonbench", "G")), reason="corpus not present")
def test_triton_reference_sets_the_precision(fork_worker):
    """TritonBench-G's matmul_triton2 runs fp32 tl.dot at Triton's default (TF32), as its own reference does: no
    reduced_precision against itself (the H100 sweep rejected it while the first trial judged the precision before
    the reference's launches were counted)."""
    spec = {"format": "tritonbench_g", "name": "matmul_triton2",
            "path": os.path.join(CORPUS, "tritonbench", "G", "kernels", "matmul_triton2.py")}
    r = fork_worker.request({"op": "eval", "task": spec, "candidate": None, "mode": "check", "trials": 1,
                             "limits": {"timeout_s": 120}}, timeout=200)
    assert r["verdict"] == "ok", r.get("reasons")
    assert r["precision"] == {"candidate_dots": "tf32", "task": "tf32"}


def test_large_master_inputs_are_checked_by_fingerprint():
    import torch
    from kiln_worker import compare, memory
    x = torch.randn(1000)
    tree = ([x, torch.arange(10)], {})
    small = memory.snapshot(tree)
    assert small[0] == "clone" and memory.changed(tree, small) == []
    memory.SNAPSHOT_CLONE_BYTES, compare.CHUNK = 0, 64
    try:
        snap = memory.snapshot(tree)
        assert snap[0] == "fingerprint" and memory.changed(tree, snap) == []
        x[3], x[500] = x[500].item(), x[3].item()       # a swap keeps the plain sum: the weighted one moves
        assert memory.changed(tree, snap) == ["out[0][0]"]
        x[3], x[500] = x[500].item(), x[3].item()
        tree[0][1][9] += 1
        assert memory.changed(tree, snap) == ["out[0][1]"]
        # weights are random per snapshot, not periodic by position: a swap 65521 elements apart (a period of
        # the former position weights) is seen too
        y = torch.randn(70000)
        snap = memory.snapshot(([y], {}))
        y[1], y[1 + 65521] = y[1 + 65521].item(), y[1].item()
        assert memory.changed(([y], {}), snap) == ["out[0][0]"]
    finally:
        memory.SNAPSHOT_CLONE_BYTES, compare.CHUNK = 16 << 20, 1 << 24


SMALL_OOM = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        # what a GPU shared with other workers answers to a modest allocation
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity")
'''


def test_out_of_memory_is_the_infrastructures_unless_the_candidate_asks_for_far_more(fork_worker):
    r = fork_worker.request(eval_request(os.path.join(CANDIDATES, "faulty", "huge_allocation.py")))
    assert r["verdict"] == "runtime_error" and codes(r) == ["out_of_memory"]
    assert "the task's footprint is" in r["message"]        # both figures
    req = eval_request(_cand("honest", "relu_ok"))
    req["candidate"] = {"source": SMALL_OOM, "name": "small_oom.py"}
    r = fork_worker.request(req)
    assert not r["ok"] and r["error_code"] == "infra_out_of_memory", r
    assert r["memory"]["requested_bytes"] == 64 << 20 and r["memory"]["in_candidate"]
    # where kiln was (its own frames, innermost first) and the phases done, for an OOM outside the candidate
    assert r["memory"]["where"].split(" < ")[0].startswith("evaluate.py:") and "_call_candidate" in r["memory"]["where"]
    assert "load_reference" in r["phases"], r.get("phases")


def test_blame_outside_the_candidate_is_always_the_infrastructures():
    from kiln_worker import memory
    b = memory.Budget()
    b.footprint = 1 << 20
    assert memory.blame_oom("Tried to allocate 8.00 GiB", True, b, None) is None
    assert memory.blame_oom("Tried to allocate 8.00 GiB", False, b, None)["in_candidate"] is False
    assert memory.blame_oom("out of memory", True, b, None)["requested_bytes"] is None


def test_the_footprint_is_the_largest_case_not_the_first():
    # A TritonBench module's `test` case (kilobytes) ran first; its perf cases take gigabytes. An honest
    # candidate out of memory at the largest one asked 8 GiB: "far more than the 8 KiB task" blamed it.
    import torch
    from kiln_worker import memory
    b = memory.Budget()
    b.note_task([torch.empty(1024)], torch.empty(1024))
    assert b.footprint == 8192
    # the large case running, before its reference finished: its inputs (8 GiB; meta tensors stand for
    # large inputs already freed) and an output as large count
    big = [torch.empty((1 << 31,), device="meta")]
    assert memory.blame_oom("Tried to allocate 8.00 GiB", True, b, big)["in_candidate"] is True
    b.note_task([torch.empty(1 << 18)], torch.empty(1 << 18))     # 2 MiB: a larger case raises it
    assert b.footprint == 2 << 20
    b.note_task([torch.empty(1024)], torch.empty(1024))           # a smaller case after it changes nothing
    assert b.footprint == 2 << 20
    # far more than the largest case is still the candidate's own
    assert memory.blame_oom("Tried to allocate 8.00 GiB", True, b, None) is None
