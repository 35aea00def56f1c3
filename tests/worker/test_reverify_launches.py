"""A speedup above 10x is re-verified with more trials after timing (evaluate.Evaluator._run). timing.time_cases
turns the launch log off while it times (its launch hook counts alone); the re-verification's trials must record
the candidate's launches again, or an honest kernel is rejected as `no_triton_launch` (and its kernels counted as
foreign): seen on an H100 in session 10, the e2e test's correct TritonBench-G sample (59.6x over a gold that uses
4-element blocks). Timing needs a GPU: here the interpreter runs the worker with the measurement stubbed (a 20x
speedup), in a fresh process (the interpreter must be chosen before triton is imported)."""
import json
import os
import subprocess
import sys

from workerproc import CANDIDATES, REPO, task_spec

_PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from kiln_worker import platform as plat
plat.select_mode(True)
from kiln_worker import server
server._prepare()   # the worker's interpreter shims and instrumentation
from kiln_worker import timing
from kiln_worker.evaluate import Evaluator


def measure_pair(cand, ref, opts, between_rounds=None):
    for w in (cand, ref):   # as timing._Watched calls them on a GPU, where the launch hook counts their launches
        w.last = w.fn()
        w.calls += 1
    return {"candidate_ms": {"median": 0.1}, "reference_ms": {"median": 2.0}, "speedup": 20.0,
            "speedup_spread": [19.0, 21.0], "timing_method": "events_cold_l2"}


plat.timing_available = lambda: True
timing._synchronize = lambda: None
timing.measure_pair = measure_pair
plat.LAUNCHES.reset()
ev = Evaluator(json.loads(sys.argv[2]))
try:
    r = ev.run()
finally:
    ev.release()
print(json.dumps({"verdict": r.get("verdict"), "reasons": r.get("reasons")}))
"""


def test_reverification_records_the_candidates_launches():
    with open(os.path.join(CANDIDATES, "honest", "relu_ok.py")) as f:
        src = f.read()
    req = {"op": "eval", "task": task_spec("relu"), "candidate": {"source": src, "name": "relu_ok.py"},
           "mode": "time", "trials": 1, "limits": {"timeout_s": 120}}
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", _PROBE, os.path.join(REPO, "worker"), json.dumps(req)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    codes = [x["code"] for x in r["reasons"] or []]
    assert "excessive_speedup" in codes, r          # the re-verification ran
    assert r["verdict"] == "ok" and "no_triton_launch" not in codes, r
