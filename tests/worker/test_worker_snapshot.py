"""The patch check's snapshot of the worker's own modules: the worker's lazily filled state (the cold-L2
buffer, set at the first cold-L2 timing inside a candidate's evaluation) is not a patch; a replaced worker
function still is."""
import importlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import guards, timing  # noqa: E402


def test_every_lazy_name_exists():
    for name in guards._WORKER_LAZY:
        mod, _, attr = name.rpartition(".")
        assert hasattr(importlib.import_module(mod), attr), name


def test_lazy_state_filled_between_snapshots_is_not_a_patch(monkeypatch):
    monkeypatch.setattr(timing, "_l2_buf", None)
    before = guards.snapshot()
    timing._l2_buf = object()   # what timing._l2_buffer() does at its first call
    assert guards.compare_snapshots(before, guards.snapshot()) == []


def test_replaced_worker_function_is_a_patch(monkeypatch):
    before = guards.snapshot()
    monkeypatch.setattr(timing, "measure_pair", lambda *a, **k: None)
    found = guards.compare_snapshots(before, guards.snapshot())
    assert ("patched_worker", "kiln_worker.timing.measure_pair") in found


def test_replaced_worker_data_is_a_patch(monkeypatch):
    before = guards.snapshot()
    monkeypatch.setattr(timing, "GRAPH_THRESHOLD_MS", 1e9)
    assert any(n == "kiln_worker.timing.GRAPH_THRESHOLD_MS" for _, n in guards.compare_snapshots(before, guards.snapshot()))
