"""kiln optimize's verification times a finalist against the original in the same request: the request's
`baseline` (the original's source) is loaded like the reference and timed in the reference's place, while
the reference still decides correctness. (Comparing separate requests let an autotuned original's pick in
each process decide: on an H100, swiglu_backward's original measured 0.0018-0.021 ms on one size across
requests, and finalists 1.4x faster side by side were rejected at 0.27x.)"""
import json
import os
import subprocess
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import timing  # noqa: E402
from workerproc import CANDIDATES, CORPUS, REPO, task_spec  # noqa: E402

import test_timed_output as tto  # noqa: E402  (the stand-in Evaluator and task)


def test_time_cases_times_the_baseline_in_the_references_place(monkeypatch):
    seen = {}

    def fake_measure(cand, refw, opts, between_rounds=None):
        cand()
        refw()
        return {"candidate_ms": {"median": 1.0}, "reference_ms": {"median": 2.0}, "speedup": 2.0,
                "speedup_spread": [1.9, 2.1], "timing_method": "events_cold_l2"}

    class _Task(tto._Task):
        def baseline(self, case):
            def original(x):
                seen["baseline"] = seen.get("baseline", 0) + 1
                return torch.relu(x)
            return original

    def reference(x):   # correctness only: the timed-output check
        seen["reference"] = seen.get("reference", 0) + 1
        return torch.relu(x)
    monkeypatch.setattr(tto, "ref", reference)
    monkeypatch.setattr(timing, "measure_pair", fake_measure)
    monkeypatch.setattr(timing, "_synchronize", lambda: None)

    class _Ev:
        seed, runtime, ref_mutates_inputs, tolerance, tf32 = 7, {}, False, {}, False
        has_baseline = True

        def _phase(self, name, t0):
            pass

    for with_baseline in (True, False):
        seen.clear()
        ev = _Ev()
        ev.has_baseline = with_baseline
        ev.cases_out = [{"name": "c0"}]
        ev.timing_opts = {"time_reference": True, "rounds": 1}
        ev.reasons = tto._Reasons()
        ev.task = _Task(lambda x: torch.relu(x))
        timing.time_cases(ev, ["c0"])
        if with_baseline:
            assert seen == {"baseline": 1, "reference": 1}, seen     # timed: the baseline; checked: the reference
            assert ev.cases_out[0]["reference_is"] == "baseline"
        else:
            assert seen == {"reference": 2}, seen
            assert "reference_is" not in ev.cases_out[0]


# Each task format loads a baseline and gives its callable per case (under the interpreter, in a fresh
# process: the interpreter must be chosen before triton is imported).
_PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from kiln_worker import platform as plat
plat.select_mode(True)
from kiln_worker import server
server._prepare()   # the worker's interpreter shims and instrumentation
from kiln_worker import tasks, compare
spec, source, case = json.loads(sys.argv[2]), sys.argv[3], sys.argv[4]
t = tasks.make_task(spec)
with plat.cuda_shim():   # "cuda" tensors of the harness on the CPU, as in the worker
    t.load_reference()
    t.load_baseline(source, "baseline.py")
    fn = t.baseline(case)
    ref = t.reference(case)
    inp = t.inputs(case, 5) if case != "test" else None
    args, kwargs = inp if inp is not None else ([], {})
    tasks.seed_all(11)   # a TritonBench test draws its own inputs
    out_b = fn(*tasks.clone_tree(args), **tasks.clone_tree(kwargs))
    tasks.seed_all(11)
    out_r = ref(*tasks.clone_tree(args), **tasks.clone_tree(kwargs))
print(json.dumps({"same": compare.close(out_b, out_r, {}, False),
                  "module": getattr(fn, "__module__", "") or type(fn).__module__}))
"""


def _probe(spec, source, case):
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", _PROBE, os.path.join(REPO, "worker"), json.dumps(spec), source, case],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_kiln_task_baseline():
    spec = task_spec("kiln:examples/softmax")
    with open(spec["path"]) as f:
        src = f.read()
    r = _probe(spec, src, "tiny")
    assert r["same"] and r["module"].startswith("kiln_base"), r


def test_kernelbench_task_baseline():
    spec = task_spec("relu")
    with open(os.path.join(CANDIDATES, "honest", "relu_ok.py")) as f:
        src = f.read()
    r = _probe(spec, src, "default")
    assert r["same"] and r["module"].startswith("kiln_base"), r


@pytest.mark.skipif(not os.path.isdir(os.path.join(CORPUS, "tritonbench", "G")), reason="corpus not present")
def test_tritonbench_task_baseline():
    spec = task_spec("corpus:tritonbench/G/kernels/l2_norm_triton2.py")
    with open(spec["path"]) as f:
        src = f.read()
    r = _probe(spec, src, "test")
    assert r["same"] and r["module"].startswith("kiln_base"), r


def test_baseline_loads_only_when_timing(fork_worker):
    """A baseline that cannot load is the caller's error (task_error), never the candidate's verdict; a
    check request does not load it at all."""
    spec = task_spec("kiln:examples/softmax")
    req = {"op": "eval", "task": spec, "candidate": None, "trials": 1, "limits": {"timeout_s": 60},
           "baseline": {"source": "raise RuntimeError('broken original')\n", "name": "baseline.py"}}
    r = fork_worker.request(dict(req, mode="check"))
    assert r["ok"] and r["verdict"] == "ok", r
    r = fork_worker.request(dict(req, mode="time"))
    assert not r["ok"] and r["error_code"] == "task_error" and "timing baseline" in r["error"], r
