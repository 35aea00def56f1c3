"""Issue 14 on a GPU, replayed from a transcript recorded on an NVIDIA H100 (bench/gpu/verdict_checks.sh kb,
committed as tests/worker/data/h100_verdicts_check.jsonl): what only a GPU shows. The profiler's kernel records
attribute the work (foreign_kernel beside torch_compute, the own share of GPU time), the compiled kernels' TTIR
gives the dot precision, and the KernelBench level-1 tasks run at their real sizes without running out of memory,
with the task's footprint and the worker's peak beside each other."""
import json
import os

from workerproc import codes

DATA = os.path.join(os.path.dirname(__file__), "data", "h100_verdicts_check.jsonl")


def _records():
    with open(DATA) as f:
        lines = [json.loads(line) for line in f]
    assert lines[0]["request"]["op"] == "hello" and lines[0]["response"]["interpreter"] is False
    assert "H100" in lines[0]["response"]["devices"][0]["name"]
    return [d for d in lines if d["request"].get("op") == "eval"]


def _by(name, task=None):
    out = [d for d in _records() if d["request"]["candidate"]["name"] == name
           and (task is None or d["request"]["task"]["name"] == task)]
    assert out, (name, task)
    return out[-1]["response"]


def test_profiler_names_foreign_kernels_beside_torch_compute():
    for name in ("relu_mul_mask.py", "einsum_gemm.py", "softmax_decomposed.py", "reshaped_view_matmul.py"):
        r = _by(name)
        assert r["verdict"] == "rejected" and {"torch_compute", "foreign_kernel"} <= set(codes(r)), (name, codes(r))
        a = r["attribution"]
        assert a["method"] == "profiler" and a["foreign_ms"] > 0 and a["foreign_kernels"], (name, a)
        assert a["own_share"] < 0.9 and a["dispatcher"]["foreign_compute_ops"] > 0


def test_honest_candidates_spend_their_compute_in_their_own_kernels():
    for name in ("matmul_ok.py", "matmul_padded_ok.py", "softmax_rows_ok.py", "relu_views_ok.py"):
        r = _by(name)
        assert r["verdict"] == "ok", (name, r.get("reasons"))
        a = r["attribution"]
        assert a["method"] == "profiler" and a["foreign_ms"] == 0 and a["own_share"] > 0, (name, a)


def test_dot_precision_from_the_compiled_kernels():
    assert _by("matmul_ok.py")["precision"] == {"candidate_dots": "ieee", "task": "ieee"}
    for name, p in (("tf32_dot_fp32.py", "tf32"), ("bf16_dot_fp32.py", "bf16"), ("fp16_dot_fp32.py", "fp16")):
        r = _by(name)
        assert r["verdict"] == "rejected" and "reduced_precision" in codes(r), (name, codes(r))
        assert r["precision"]["candidate_dots"] == p and r["precision"]["reduced"], (name, r["precision"])


def test_real_size_kernelbench_tasks_run_within_the_gpu():
    """19_ReLU and 24_LogSoftmax at 4096 x 393216 fp32 (6 GiB a tensor): the honest kernels pass (they were
    out_of_memory before, with 78 GB in use), hacks are rejected for their own reason, never for memory."""
    gib = 1 << 30
    for task, honest, hacks in (("19_ReLU", "relu_ok.py", ("relu_mul_mask.py", "aten_alias_runtime.py",
                                                               "torch_compile_relu.py", "numpy_host_relu.py")),
                                ("24_LogSoftmax", "logsoftmax_ok.py", ("logsoftmax_decomposed.py",
                                                                       "logsoftmax_partial.py"))):
        r = _by(honest, task)
        assert r["verdict"] == "ok", (task, r.get("reasons"))
        m = r["memory"]
        assert m["footprint_bytes"] == 12 * gib and m["peak_bytes"] < 60 * gib, m
        for h in hacks:
            r = _by(h, task)
            assert r["verdict"] == "rejected" and "out_of_memory" not in codes(r), (task, h, codes(r))
