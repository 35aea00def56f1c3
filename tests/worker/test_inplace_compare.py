"""The in-place comparison (a task whose reference updates its inputs: candidate and reference each start
from their own clone of the same values, and must leave them alike). Issue 16: comparing the 16 GiB
inputs of TritonBench-G context_attn_nopad's largest perf size ran out of memory inside the comparison,
and that failure was reported as `input_side_effect_mismatch` (the module against itself). A failure of
the comparison is now an error of its own (out of memory is classified as such); only a difference is a
mismatch."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import compare, evaluate  # noqa: E402


def _ev():
    ev = evaluate.Evaluator.__new__(evaluate.Evaluator)
    ev.tolerance, ev.tf32 = {}, False
    return ev


def test_alike_inputs_pass_and_different_ones_mismatch():
    x = torch.randn(8, 8)
    assert _ev()._same_side_effects(([x.clone()], {}), ([x.clone()], {}))
    y = x.clone()
    y[0, 0] += 1.0
    assert not _ev()._same_side_effects(([x], {}), ([y], {}))


def test_a_failing_comparison_is_not_a_mismatch(monkeypatch):
    def oom(*a, **k):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB")
    monkeypatch.setattr(compare, "compare", oom)
    x = torch.randn(4)
    with pytest.raises(torch.OutOfMemoryError):
        _ev()._same_side_effects(([x], {}), ([x.clone()], {}))
    code, _ = evaluate.classify_exception(torch.OutOfMemoryError("CUDA out of memory."))
    assert code == "out_of_memory"


def _racy_scatter(out, src, idx, winner):
    """out[idx[i]] = src[i] with repeated indices: which write lands depends on `winner` (the race)."""
    order = range(len(idx)) if winner == 0 else reversed(range(len(idx)))
    for i in order:
        out[idx[i]] = src[i]


def test_racing_in_place_writes_are_not_compared():
    # destindex_copy's harness: destination indices with repeats; the slot a repeat lands in differs from
    # run to run, in the candidate as in the reference (the module against itself).
    src = torch.arange(8, dtype=torch.float32) + 1
    idx = torch.tensor([0, 1, 1, 2, 3, 3, 4, 5])
    base = torch.zeros(6)
    runs = iter([1, 0, 1])

    def run(w):
        o = base.clone()
        _racy_scatter(o, src, idx, w)
        return ([o], {})
    c, r = run(0), run(1)
    stats = {}
    assert _ev()._same_side_effects(c, r, stats, lambda: run(next(runs)))
    assert stats["unstable_input_elements"] == 2 and "not compared" in stats["note"]


def test_a_wrong_write_outside_the_race_still_mismatches():
    src = torch.arange(8, dtype=torch.float32) + 1
    idx = torch.tensor([0, 1, 1, 2, 3, 3, 4, 5])
    base = torch.zeros(6)

    def run(w):
        o = base.clone()
        _racy_scatter(o, src, idx, w)
        return ([o], {})
    c = run(0)
    c[0][0][5] = -1.0            # the candidate's own error, on a slot written once
    runs = iter([0, 1, 0])
    assert not _ev()._same_side_effects(c, run(1), {}, lambda: run(next(runs)))
    # and a deterministic reference gives the difference no slack
    assert not _ev()._same_side_effects(run(0), run(1), {}, lambda: run(1))
