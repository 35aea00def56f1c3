"""timing.time_cases frees the reference's timed inputs, its last output and its timer (with its captured
graph) before the timed-output check clones the inputs again and runs the reference once more: at a 16 GiB
footprint (TritonBench-G's context_attn_nopad, fast_rope_embedding on an H100) holding them ran the check out
of memory. Timing needs a GPU, so measure_pair and the check stand in here, on CPU tensors."""
import gc
import os
import sys
import weakref

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import timing  # noqa: E402


class _Reasons:
    def add(self, code, msg):
        pass


class _Task:
    def __init__(self, seen):
        self.seen = seen

    def inputs(self, case, seed):
        return [torch.randn(64, 32)], {}

    def candidate(self, case):
        return torch.relu

    def reference(self, case):
        def ref(x):
            out = torch.relu(x)
            self.seen["ref_input"] = weakref.ref(x)
            self.seen["ref_output"] = weakref.ref(out)
            return out
        return ref


def _run(monkeypatch, has_baseline=False):
    seen, held = {}, {}

    class _Timer:
        method = "events"
        graph = None

    def fake_measure(cand, refw, opts, between_rounds=None):
        cand()
        refw()                      # the reference's timed call: its output stays in refw.last
        t = _Timer()
        refw.timer = t              # as a reference timer would hold its graph
        seen["ref_timer"] = weakref.ref(t)
        return {"candidate_ms": {"median": 1.0}, "reference_ms": {"median": 1.0}, "speedup": 1.0,
                "timing_method": "events"}

    def fake_check(out, ref_fn, args, kwargs, tolerance, tf32):
        gc.collect()
        for k in ("ref_input", "ref_output", "ref_timer"):
            held[k] = seen[k]() is not None
        return None

    monkeypatch.setattr(timing, "measure_pair", fake_measure)
    monkeypatch.setattr(timing, "check_timed_output", fake_check)

    class _Ev:
        seed, runtime, ref_mutates_inputs, tolerance, tf32 = 7, {}, False, {}, False

        def _phase(self, name, t0):
            pass

    ev = _Ev()
    ev.cases_out = [{"name": "c0"}]
    ev.timing_opts = {"rounds": 1}
    ev.reasons = _Reasons()
    ev.task = _Task(seen)
    ev.has_baseline = has_baseline
    if has_baseline:
        ev.task.baseline = ev.task.reference
    timing.time_cases(ev, ["c0"])
    return held, ev.cases_out[0]


def test_reference_copies_are_freed_before_the_timed_output_check(monkeypatch):
    held, case = _run(monkeypatch)
    assert held == {"ref_input": False, "ref_output": False, "ref_timer": False}, held
    assert case.get("speedup") == 1.0 and "reference_is" not in case


def test_a_baseline_pair_still_says_so(monkeypatch):
    held, case = _run(monkeypatch, has_baseline=True)
    assert not any(held.values()), held
    assert case.get("reference_is") == "baseline"


def test_a_timed_call_lets_go_of_the_previous_output_before_it_runs():
    # Each timed call of candidate and reference used to hold its previous output until the new one was
    # returned: one output more at the peak, what ran fast_rope_embedding (16 GiB inputs) out of memory.
    outs = []
    alive_at_call = []

    def fn():
        gc.collect()
        alive_at_call.append(sum(r() is not None for r in outs))
        out = torch.empty(8)
        outs.append(weakref.ref(out))
        return out

    w = timing._Watched(fn)
    for _ in range(3):
        w()
    assert alive_at_call == [0, 0, 0]
    assert w.last is not None and outs[-1]() is w.last   # the last output stays for the timed-output check
    assert w.calls == 3
