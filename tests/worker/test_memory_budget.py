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

# gives its (large) input another class, whose __torch_function__ would answer for the reference's relu
BIG_RELU_RETYPE = BIG_RELU.replace("class ModelNew(nn.Module):", """class Answer(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return torch.zeros(args[0].shape) if func is torch.relu else super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(nn.Module):""").replace("        return out\n", "        x.__class__ = Answer\n        return out.zero_()\n")

# a task whose reference changes its (large) input in place, and a candidate that does the same
BIG_RELU_INPLACE_TASK = BIG_RELU_TASK.replace("return torch.relu(x)", "return x.relu_()")


def _request(tmp_path, source, trials=2, task_source=BIG_RELU_TASK):
    task = tmp_path / "big_relu.py"
    task.write_text(task_source)
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
    # large inputs: the candidate runs on the master (no clone), the inputs are freed before the comparison,
    # fingerprints without temporaries on the GPU and in 2 MiB steps here: the master and both outputs while the
    # reference runs (3 tensors of 64 MiB = 1.5x) are the peak, plus the interpreter's and Python's own heap
    # (1.53-1.64x measured in session 9 on a loaded machine, 1.72x once in session 20's CI; 1.61x before, 3x at
    # first). The bound is what a regression would cross: one more 64 MiB tensor (a clone of the input for
    # the candidate) is another 0.5x, 2.0x and above; below it is the heap's noise.
    assert m["peak_bytes"] >= m["footprint_bytes"], m
    assert m["ratio"] <= 1.85, m


def test_large_inputs_changed_in_place_are_still_caught(fork_worker, tmp_path):
    r = fork_worker.request(_request(tmp_path, BIG_RELU_INPLACE, trials=1))
    assert r["verdict"] == "rejected" and "input_mutated" in codes(r), r.get("reasons")
    assert r["runtime_checks"]["inputs_mutated"]


def test_every_result_reports_the_peak(fork_worker):
    # (references that change their inputs, now run on the master: test_inplace_compare.py)
    r = fork_worker.request(eval_request(os.path.join(CANDIDATES, "honest", "relu_ok.py")))
    assert r["verdict"] == "ok" and r["memory"]["peak_of"] == "host_rss"



def test_large_inputs_given_another_class_are_caught(fork_worker, tmp_path):
    # the candidate gets the master inputs themselves when they are large: a new class for them is a change
    r = fork_worker.request(_request(tmp_path, BIG_RELU_RETYPE, trials=1))
    assert r["verdict"] == "rejected" and "input_mutated" in codes(r), r.get("reasons")
    assert any("class" in x["message"] for x in r["reasons"]), r["reasons"]


def test_large_inputs_changed_like_the_reference_pass(fork_worker, tmp_path):
    # the reference changes its input in place too: it gets the inputs drawn again (checked against the
    # fingerprints), and the candidate's changed inputs are compared with its own
    r = fork_worker.request(_request(tmp_path, BIG_RELU_INPLACE, trials=1, task_source=BIG_RELU_INPLACE_TASK), timeout=400)
    assert r["verdict"] == "ok", r.get("reasons")
    assert not r["runtime_checks"]["inputs_mutated"]


FP_TRITON = """
from kiln_worker import platform as plat
plat.select_mode(True)
import torch
from kiln_worker import memory
x = torch.randn(200_003)
bits = x.view(torch.int32)
a = memory._fingerprint_triton(bits, 12345)
assert a == memory._fingerprint_triton(bits, 12345)             # deterministic for a key
y = x.clone(); y[1], y[1 + memory.FP_BLOCK] = x[1 + memory.FP_BLOCK].item(), x[1].item()
b = memory._fingerprint_triton(y.view(torch.int32), 12345)
assert a[0] == b[0] and a[1] != b[1], (a, b)                    # a swap keeps the plain sum, not the weighted one
y = x.clone(); y[200_002] += 1.0
assert memory._fingerprint_triton(y.view(torch.int32), 12345)[0] != a[0]   # the last, partial block is read
assert memory._fingerprint_triton(bits, 54321)[1] != a[1]       # the weights come from the key
print("fingerprint ok")
"""


def test_the_gpu_fingerprint_kernel_under_the_interpreter():
    # memory._fingerprint_triton is what checks large inputs on a GPU (no temporaries); run by Triton's interpreter
    import subprocess
    from workerproc import PYTHON, REPO
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "worker"), TRITON_INTERPRET="1")
    r = subprocess.run([PYTHON, "-c", FP_TRITON], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "fingerprint ok" in r.stdout, r.stderr[-2000:]
