"""The timed pair's memory (timing.measure_pair, timing.check_timed_output). With 16 GiB of inputs and 16 of
outputs (TritonBench-G's fast_rope_embedding at its largest perf case), the pair held both input sets, the
candidate's last output and the reference's while a call made the next one: out of memory on an 80 GB budget
(H200 capped at 79 GiB, session 15). Timed with events, no candidate output may be alive while the reference
runs, the reference keeps none, and the output checked afterwards is still a timed call's (the candidate's,
after the reference's last). The timed-output check runs the reference on large inputs without cloning them,
and gives no verdict (never a false mismatch) when that reference changes them after all.
A simulated GPU stands in for CUDA (test_timing_warmup's)."""
import gc
import os
import sys
import weakref

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import memory, tasks as tasks_mod, timing  # noqa: E402
from test_timing_warmup import FakeGPU, install  # noqa: E402


def _pair(monkeypatch, rounds=3):
    gpu = FakeGPU(2.0)
    install(monkeypatch, gpu)
    monkeypatch.setattr(timing, "_l2_buffer", lambda: None)
    outs = {"cand": [], "ref": []}
    events = []

    def make(who):
        def fn():
            gc.collect()
            alive = {k: sum(r() is not None for r in v) for k, v in outs.items()}
            events.append((who, alive))
            gpu.kernel()
            out = torch.empty(4)
            outs[who].append(weakref.ref(out))
            return out
        return fn

    cand = timing._Watched(make("cand"))
    ref = timing._Watched(make("ref"), keep=False)
    res = timing.measure_pair(cand, ref, {"cuda_graph": "never", "rounds": rounds, "rep_ms": 40, "min_reps": 6})
    return cand, ref, res, events, outs


def test_no_candidate_output_is_alive_while_the_reference_runs(monkeypatch):
    cand, ref, res, events, outs = _pair(monkeypatch)
    assert res["speedup"] > 0 and res["timing_method"].startswith("events")
    # every call of the reference (its warmup's too) ran with no candidate output alive, and no reference
    # output outlived its call
    during_ref = [alive["cand"] for who, alive in events if who == "ref"]
    assert len(during_ref) > 6 and all(n == 0 for n in during_ref), during_ref
    assert all(alive["ref"] == 0 for _, alive in events), "a reference output outlived its call"


def test_the_checked_output_is_the_candidates_last_timed_call_after_the_reference(monkeypatch):
    cand, ref, res, events, outs = _pair(monkeypatch)
    assert cand.last is not None and outs["cand"][-1]() is cand.last
    assert ref.last is None
    assert events[-1][0] == "cand", "the last round times the reference first"
    assert res["candidate_ms"]["n"] >= 6 and res["reference_ms"]["n"] == res["candidate_ms"]["n"]


def test_large_inputs_are_not_cloned_for_the_timed_output_check(monkeypatch):
    n = (memory.SNAPSHOT_CLONE_BYTES // 4) + 1024
    x = torch.randn(n)
    clones = []
    real = tasks_mod.clone_tree
    monkeypatch.setattr(tasks_mod, "clone_tree", lambda t: clones.append(1) or real(t))
    assert timing.check_timed_output(torch.relu(x), torch.relu, [x], {}, {}, False) is None
    assert clones == []
    msg = timing.check_timed_output(torch.relu(x) + 1, torch.relu, [x], {}, {}, False)
    assert msg and clones == []
    # small inputs are still cloned
    y = torch.randn(64)
    assert timing.check_timed_output(torch.relu(y), torch.relu, [y], {}, {}, False) is None
    assert clones


def test_a_reference_that_changes_large_inputs_gives_no_verdict(monkeypatch):
    n = (memory.SNAPSHOT_CLONE_BYTES // 4) + 1024
    x = torch.randn(n)

    def ref(t):
        t.add_(1.0)          # in place after all (it left them alone in the check)
        return t.clone()

    # the candidate's output differs from what this reference returns; without the guard it is a mismatch
    assert timing.check_timed_output(torch.zeros(n), ref, [x], {}, {}, False) is None


def test_an_output_sharing_the_inputs_memory_keeps_the_clones(monkeypatch):
    n = (memory.SNAPSHOT_CLONE_BYTES // 4) + 1024
    x = torch.randn(n)
    clones = []
    real = tasks_mod.clone_tree
    monkeypatch.setattr(tasks_mod, "clone_tree", lambda t: clones.append(1) or real(t))
    assert timing.check_timed_output(x[: n // 2], lambda t: t[: n // 2].clone(), [x], {}, {}, False) is None
    assert clones
