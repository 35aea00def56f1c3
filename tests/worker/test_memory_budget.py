"""Memory as a budget (issue 14): a trial's peak within about 1.5x the task's own footprint, measured by the
worker's own accounting (`memory.peak_bytes`: under the interpreter the process's peak resident set), without
weakening the input checks that the restructured trial touches."""
import os

from workerproc import CANDIDATES, codes, eval_request

# 4096 x 4096 fp32: 64 MiB a tensor, so that the tensors dominate the process's resident set
BIG_RELU_TASK = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return []
'''

BIG_RELU = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask, other=0.0), 0.0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        relu_kernel[(triton.cdiv(x.numel(), 1 << 18),)](x, out, x.numel(), BLOCK=1 << 18)
        return out
'''

# changes its input in place where the reference leaves it alone
BIG_RELU_INPLACE = BIG_RELU.replace("out = torch.empty_like(x)", "out = x")


def _request(tmp_path, source, trials=2):
    task = tmp_path / "big_relu.py"
    task.write_text(BIG_RELU_TASK)
    return {"op": "eval", "task": {"format": "kernelbench", "name": "big_relu", "path": str(task)},
            "candidate": {"source": source, "name": "cand.py"}, "mode": "check", "policy": "strict",
            "seed": 1234, "trials": trials, "limits": {"timeout_s": 120}}


def test_trial_peak_is_within_one_and_a_half_footprints(shared_worker, tmp_path):
    # the first request of a process pays one-time costs (the interpreter's first launch, allocator arenas:
    # 60-120 MB here); the second measures the trial itself
    shared_worker.request(_request(tmp_path, BIG_RELU, trials=1))
    r = shared_worker.request(_request(tmp_path, BIG_RELU))
    assert r["verdict"] == "ok", r.get("reasons")
    m = r["memory"]
    assert m["footprint_bytes"] == 2 * 64 << 20 and m["peak_of"] == "host_rss"
    # the inputs twice (master, the candidate's clone) and one output while the candidate runs; the master and
    # both outputs while the reference runs: 3 tensors of 64 MiB = 1.5x, and chunks of the comparisons (five tensors
    # and the earlier outputs held for the aliasing checks, over 3x, before)
    assert m["peak_bytes"] >= m["footprint_bytes"], m
    assert m["ratio"] <= 1.75, m


def test_large_inputs_changed_in_place_are_still_caught(fork_worker, tmp_path):
    r = fork_worker.request(_request(tmp_path, BIG_RELU_INPLACE, trials=1))
    assert r["verdict"] == "rejected" and "input_mutated" in codes(r), r.get("reasons")
    assert r["runtime_checks"]["inputs_mutated"]


def test_every_result_reports_the_peak(fork_worker):
    # (references that change their inputs, now run on the master: test_inplace_compare.py)
    r = fork_worker.request(eval_request(os.path.join(CANDIDATES, "honest", "relu_ok.py")))
    assert r["verdict"] == "ok" and r["memory"]["peak_of"] == "host_rss"

