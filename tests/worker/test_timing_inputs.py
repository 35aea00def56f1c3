"""The timing stage's input copies (issue 16: TritonBench-G perf sizes ran out of memory on an 80 GB H100
in mode time). A second draw of a case, copied into the timed inputs between rounds, only exists where the
task's inputs vary with the seed; a TritonBench perf case is one fixed input, so the timing stage draws it
once and times the candidate on that draw (two input copies on the GPU, not four)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import tasks, timing  # noqa: E402
import test_timed_output as tto  # noqa: E402


class _CountingTask(tto._Task):
    def __init__(self, cand, vary):
        super().__init__(cand)
        self.vary, self.draws, self.given = vary, [], []

    def inputs(self, case, seed):
        x = torch.full((4, 8), float(seed))
        self.draws.append(x)
        return [x], {}

    def inputs_vary_with_seed(self, case):
        return self.vary


def _time(monkeypatch, task, rounds=3):
    seen = []

    def fake_measure(cand, refw, opts, between_rounds=None):
        for k in range(rounds):
            if k > 0 and between_rounds:
                between_rounds(k - 1)
            cand()
            seen.append(task.given[-1].clone())
        return {"candidate_ms": {"median": 1.0}, "timing_method": "events_cold_l2"}

    def cand(x):
        task.given.append(x)
        return torch.relu(x)
    task.cand = cand
    monkeypatch.setattr(timing, "measure_pair", fake_measure)
    monkeypatch.setattr(timing, "_synchronize", lambda: None)
    codes = tto._run_time_cases(task, {"time_reference": False, "rounds": rounds})
    return codes, seen


def test_fixed_input_is_drawn_once_and_timed_in_place(monkeypatch):
    task = _CountingTask(None, vary=False)
    codes, seen = _time(monkeypatch, task)
    assert "timed_output_mismatch" not in codes, codes
    assert len(task.draws) == 1, "a fixed input was drawn twice"
    assert all(g is task.draws[0] for g in task.given), "the candidate was timed on a copy of the draw"


def test_seeded_input_is_refreshed_between_rounds(monkeypatch):
    task = _CountingTask(None, vary=True)
    codes, seen = _time(monkeypatch, task)
    assert "timed_output_mismatch" not in codes, codes
    assert len(task.draws) == 2
    assert all(g is not task.draws[0] for g in task.given)       # a clone: the draws stay intact
    # the refreshes alternate so that the last round runs on the second draw
    assert [float(s[0, 0]) for s in seen] == [7.0, 7.0, 7.0 + 104729], [float(s[0, 0]) for s in seen]


def test_tritonbench_perf_cases_are_fixed_inputs():
    t = tasks.TritonBenchTask.__new__(tasks.TritonBenchTask)
    assert t.inputs_vary_with_seed("perf_0") is False
    assert tasks.Task({"name": "x"}).inputs_vary_with_seed("default") is True
