"""A sample of TritonBench-G modules against themselves under the interpreter (fast ones; the full 123 run on
a GPU with bench/gpu/eval_tritonbench_g.py), and TritonBench-G hacks built from a real module."""
import os
import re

import pytest

from workerproc import CORPUS, codes

G = os.path.join(CORPUS, "tritonbench", "G")
SAMPLE = ["matmul_triton1", "dropout_triton", "l2_norm_triton2", "mul_exponent_compensator", "dequantize_rowwise",
          "kldiv_ops", "logsumexp_fwd", "index_select_cat", "ksoftmax_triton", "masked_add_cuda",
          "cross_entropy1", "cosine_compute",
          # sizes its grid by torch.cuda.get_device_properties(...).multi_processor_count (faked by the shims)
          "layer_norm_liger",
          # libdevice, emulated under the interpreter: tl.extra.cuda.libdevice.pow, a global bound to the
          # backend-neutral libdevice.tanh, `from ...cuda.libdevice import isfinited`
          "rmsnorm_triton", "fast_ce_loss", "isfinite_kernel"]


def _spec(name, perf=False):
    s = {"format": "tritonbench_g", "name": name, "path": os.path.join(G, "kernels", f"{name}.py")}
    if perf:
        s["perf_path"] = os.path.join(G, "perf", f"{name}_perf.py")
    return s


pytestmark = pytest.mark.skipif(not os.path.isdir(G), reason="corpus not present")


@pytest.mark.parametrize("name", SAMPLE)
def test_module_against_itself(fork_worker, name):
    r = fork_worker.request({"op": "eval", "task": _spec(name), "candidate": None, "mode": "check", "trials": 2,
                             "limits": {"timeout_s": 60}}, timeout=120)
    assert r["ok"] and r["verdict"] == "ok", (name, r.get("reasons"), r.get("stderr_tail", "")[-500:])
    assert r["runtime_checks"]["triton_launches"] > 0


def _source(name):
    with open(os.path.join(G, "kernels", f"{name}.py")) as f:
        return f.read().split("#" * 146)[0]


def test_torch_instead_of_triton_is_rejected(fork_worker):
    """matmul_triton1's entry rewritten to call torch.matmul (its kernel stays defined, unused)."""
    src = _source("matmul_triton1")
    src += "\n\ndef matmul(x, y):\n    return torch.matmul(x, y)\n"
    r = fork_worker.request({"op": "eval", "task": _spec("matmul_triton1"),
                             "candidate": {"source": src, "name": "matmul_triton1.py"}, "mode": "check"})
    assert r["verdict"] == "rejected", r
    assert "no_triton_launch" in codes(r) and "torch_compute" in codes(r)


def test_perf_case_on_the_harness_input(fork_worker):
    """The perf harness (imports TritonBench_v1.<name> and performance_utils) gives the timed cases."""
    r = fork_worker.request({"op": "eval", "task": _spec("dequantize_rowwise", perf=True), "candidate": None,
                             "mode": "check", "cases": ["test", "perf_0"], "limits": {"timeout_s": 120}},
                            timeout=200)
    assert r["verdict"] == "ok", (r.get("reasons"), r.get("stderr_tail", "")[-800:])
    assert [c["name"] for c in r["cases"]] == ["test", "perf_0"]


def test_largest_cases_selector_picks_the_biggest_perf_inputs():
    """kiln optimize --cases @largest:K: the worker resolves the selector to the K perf-harness cases with the
    most input bytes (in sweep order). (Running them under the interpreter would take minutes.)"""
    sys_path = os.path.join(os.path.dirname(__file__), "..", "..", "worker")
    import sys
    sys.path.insert(0, sys_path)
    from kiln_worker import tasks
    t = tasks.TritonBenchTask(_spec("dequantize_rowwise", perf=True))
    t.load_reference()
    t._ensure_perf()
    sizes = [tasks.tree_bytes(x) for x in t.perf_inputs]
    assert len(set(sizes)) > 2, sizes
    want = sorted(sorted(range(len(sizes)), key=lambda i: (sizes[i], i))[-2:])
    assert t.largest_cases(2) == [f"perf_{i}" for i in want]
    assert max(sizes) == sizes[want[-1]] or max(sizes) == sizes[want[0]]


def test_largest_cases_below_the_largest():
    """@largest:K:skip:S (kiln optimize's retry when the original fails at its largest sizes, issue 21): the K
    next largest after the S largest, in sweep order; nothing below the smallest; a malformed selector is the
    request's error."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
    from kiln_worker import evaluate, tasks
    t = tasks.TritonBenchTask(_spec("dequantize_rowwise", perf=True))
    t.load_reference()
    t._ensure_perf()
    sizes = [tasks.tree_bytes(x) for x in t.perf_inputs]
    desc = sorted(range(len(sizes)), key=lambda i: (sizes[i], i), reverse=True)
    assert evaluate._largest_selection(t, "@largest:2") == [f"perf_{i}" for i in sorted(desc[:2])]
    assert evaluate._largest_selection(t, "@largest:2:skip:2") == [f"perf_{i}" for i in sorted(desc[2:4])]
    assert evaluate._largest_selection(t, "@largest:3:skip:1") == [f"perf_{i}" for i in sorted(desc[1:4])]
    assert evaluate._largest_selection(t, f"@largest:2:skip:{len(sizes) - 1}") == [f"perf_{desc[-1]}"]
    assert evaluate._largest_selection(t, f"@largest:2:skip:{len(sizes)}") == []
    for bad in ("@largest:x", "@largest:2:skip", "@largest:2:below:1"):
        with pytest.raises(tasks.TaskError):
            evaluate._largest_selection(t, bad)
    # a task without a perf harness has nothing below its cases
    t2 = tasks.TritonBenchTask(_spec("dequantize_rowwise"))
    assert t2.largest_cases(2) == ["test"] and t2.largest_cases(2, skip=2) == []


def test_largest_cases_skip_sizes_that_do_not_fit_the_gpu(monkeypatch):
    """@largest:K on a GPU too small for the harness's largest sizes (issue 21: out of memory on an 80 GB
    H100): a case whose inputs x FIT_FACTOR exceed the GPU's memory is skipped and listed, the next sizes
    are timed instead."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
    from kiln_worker import tasks
    t = tasks.TritonBenchTask(_spec("dequantize_rowwise", perf=True))
    t.load_reference()
    t._ensure_perf()
    sizes = [tasks.tree_bytes(x) for x in t.perf_inputs]
    order = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    biggest, second = order[-1], order[-2]
    assert sizes[second] < sizes[biggest], sizes
    # a GPU where the second largest fits and the largest does not
    monkeypatch.setattr(tasks.plat, "INTERPRET", False)
    monkeypatch.setattr(tasks, "_device_bytes", lambda: tasks.FIT_FACTOR * sizes[second])
    got = t.largest_cases(2)
    assert got == [f"perf_{i}" for i in sorted(order[-3:-1])], (got, sizes)
    assert len(t.skipped_cases) == sum(s > sizes[second] for s in sizes)
    assert t.skipped_cases[0].startswith(f"perf_{biggest}: its inputs take {sizes[biggest]} bytes") or \
        any(c.startswith(f"perf_{biggest}:") for c in t.skipped_cases)
    # a GPU large enough: nothing skipped
    monkeypatch.setattr(tasks, "_device_bytes", lambda: tasks.FIT_FACTOR * sizes[biggest])
    assert t.largest_cases(2) == [f"perf_{i}" for i in sorted(order[-2:])] and t.skipped_cases == []


def test_perf_inputs_are_reused_only_for_trusted_requests():
    """A warm worker keeps the generated perf sweep between trusted requests (kiln optimize) and regenerates
    it for untrusted ones (inputs() hands out clones, never the cached tensors)."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
    from kiln_worker import tasks

    def fresh(reuse):
        t = tasks.TritonBenchTask(_spec("dequantize_rowwise", perf=True))
        t.reuse_inputs = reuse
        t.load_reference()
        t._ensure_perf()
        return t

    tasks._PERF_CACHE.clear()
    a, b = fresh(True), fresh(True)
    assert b.perf_inputs is a.perf_inputs
    assert b.case_names == a.case_names and len(b.case_names) > 1
    c = fresh(False)
    assert c.perf_inputs is not a.perf_inputs
    assert not tasks._PERF_CACHE  # an untrusted request drops the cache
    d = fresh(True)
    assert d.perf_inputs is not a.perf_inputs


INDUCTOR_STYLE = """import torch
import triton
import triton.language as tl
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


def double(x):
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        y = empty_strided_cuda((x.numel(),), (1,), torch.float32)
        stream0 = get_raw_stream(0)
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        double_kernel[(min(sms, triton.cdiv(x.numel(), 128)),)](x, y, x.numel(), BLOCK=128)
    return y


""" + "#" * 146 + """


def test_double():
    return {"test_case_1": double(torch.randn(100, device='cuda'))}


result_gold = test_double()
"""


def test_inductor_style_host_code_runs_under_the_interpreter(fork_worker, tmp_path):
    """Host code generated by torch inductor (TritonBench-G's layer_norm_welfold) allocates through
    torch._C._dynamo.guards._empty_strided_cuda, takes the raw stream, enters torch.cuda._DeviceGuard and
    reads the SM count: the interpreter's shims answer all four on the CPU."""
    path = tmp_path / "inductor_style.py"
    path.write_text(INDUCTOR_STYLE)
    r = fork_worker.request({"op": "eval", "task": {"format": "tritonbench_g", "name": "inductor_style",
                                                    "path": str(path)},
                             "candidate": None, "mode": "check", "limits": {"timeout_s": 60}}, timeout=120)
    assert r["ok"] and r["verdict"] == "ok", (r.get("reasons"), r.get("stderr_tail", "")[-800:])
    assert r["runtime_checks"]["triton_launches"] > 0
