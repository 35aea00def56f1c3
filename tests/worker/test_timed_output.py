"""The output of the candidate's last timed call is checked against the reference (timing.check_timed_output):
a candidate that counts its calls can be right while checked and cut work once timed. Timing needs a GPU, so
the check itself is tested here on CPU tensors."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import timing  # noqa: E402


def ref(x):
    return torch.relu(x)


def test_right_output_passes():
    x = torch.randn(64, 32)
    assert timing.check_timed_output(torch.relu(x), ref, [x], {}, {}, False) is None


def test_output_that_cut_work_is_caught():
    x = torch.randn(64, 32)
    half = torch.relu(x)
    half[32:] = 0.0          # did half the rows
    msg = timing.check_timed_output(half, ref, [x], {}, {}, False)
    assert msg and "outside" in msg, msg


def test_wrong_shape_is_caught():
    x = torch.randn(64, 32)
    assert timing.check_timed_output(torch.relu(x)[:1], ref, [x], {}, {}, False)


def test_nondeterministic_reference_gives_no_verdict():
    calls = {"n": 0}

    def noisy(x):
        calls["n"] += 1
        return x + calls["n"]  # differs on every call
    x = torch.randn(8)
    assert timing.check_timed_output(x, noisy, [x], {}, {}, False) is None
    assert calls["n"] == 2


def test_inputs_are_not_touched():
    x = torch.randn(16)
    before = x.clone()

    def inplace(t):
        return t.add_(1)
    timing.check_timed_output(before + 1, inplace, [x], {}, {}, False)
    assert torch.equal(x, before)


class _Graph:
    """Stands in for a captured CUDA graph: replay() runs what the capture recorded."""

    def __init__(self, work):
        self.work = work

    def replay(self):
        self.work()


def test_graph_that_writes_the_output_passes(monkeypatch):
    monkeypatch.setattr(timing, "_synchronize", lambda: None)
    x = torch.randn(64, 32)
    out = torch.relu(x)
    timing.rewrite_by_graph(out, _Graph(lambda: out.copy_(torch.relu(x))))
    assert timing.check_timed_output(out, ref, [x], {}, {}, False) is None


def test_graph_that_leaves_the_output_alone_is_caught(monkeypatch):
    # Saw the capture, launched a token kernel, returned a result computed before: right in Python, not in
    # the timed graph.
    monkeypatch.setattr(timing, "_synchronize", lambda: None)
    x = torch.randn(64, 32)
    cached = torch.relu(x)
    timing.rewrite_by_graph(cached, _Graph(lambda: None))
    msg = timing.check_timed_output(cached, ref, [x], {}, {}, False)
    assert msg and "NaN" in msg, msg


def test_poison_covers_dtypes():
    t = {"f": torch.zeros(3), "i": torch.zeros(3, dtype=torch.int8), "b": torch.zeros(3, dtype=torch.bool),
         "v": torch.zeros(4, 4)[:, 1]}
    timing._poison_output(t)
    assert torch.isnan(t["f"]).all() and (t["i"] == -121).all() and t["b"].all() and torch.isnan(t["v"]).all()


class _Reasons:
    def __init__(self):
        self.codes = []

    def add(self, code, msg):
        self.codes.append((code, msg))


class _Task:
    def __init__(self, cand):
        self.cand = cand

    def inputs(self, case, seed):
        torch.manual_seed(seed)
        return [torch.randn(64, 32)], {}

    def candidate(self, case):
        return self.cand

    def reference(self, case):
        return ref


def _run_time_cases(task, opts):
    """timing.time_cases on a stand-in Evaluator; -> the reason codes it added."""
    class _Ev:
        seed, runtime, ref_mutates_inputs, tolerance, tf32, cases_out = 7, {}, False, {}, False, []

        def _phase(self, name, t0):
            pass

    ev = _Ev()
    ev.timing_opts = opts
    ev.reasons = _Reasons()
    ev.task = task
    timing.time_cases(ev, ["c0"])
    return [c for c, _ in ev.reasons.codes]


def _time_cases_with_graph(monkeypatch, cand_fn, graph_work):
    """timing.time_cases with measure_pair standing in for a CUDA-graph timing: the candidate's Python
    runs once (the capture) and the 'graph' replays `graph_work(out, args)`."""
    class _Timer:
        method = "cuda_graph"

    def fake_measure(cand, refw, opts, between_rounds=None):
        cand()                                     # the captured call
        t = _Timer()
        t.graph = _Graph(lambda: graph_work(cand.last))
        cand.timer = t
        return {"candidate_ms": {"median": 1.0}, "timing_method": "cuda_graph"}

    monkeypatch.setattr(timing, "measure_pair", fake_measure)
    monkeypatch.setattr(timing, "_synchronize", lambda: None)
    return _run_time_cases(_Task(cand_fn), {"time_reference": False, "rounds": 1})


def test_time_cases_checks_the_replayed_graph(monkeypatch):
    state = {}

    def honest(x):
        state["x"] = x
        return torch.relu(x)

    codes = _time_cases_with_graph(monkeypatch, honest, lambda out: out.copy_(torch.relu(state["x"])))
    assert "timed_output_mismatch" not in codes, codes
    cache = {}

    def sees_the_capture(x):   # returns what it computed before; the graph it leaves does nothing useful
        if "r" not in cache:
            cache["r"] = torch.relu(x)
        return cache["r"]

    codes = _time_cases_with_graph(monkeypatch, sees_the_capture, lambda out: None)
    assert "timed_output_mismatch" in codes, codes



def _time_cases_with_events(monkeypatch, cand_fn, rounds=5):
    """timing.time_cases with measure_pair standing in for event timing: `rounds` rounds of 3 calls, the
    inputs refreshed in place between rounds as the real measure_pair does."""
    def fake_measure(cand, refw, opts, between_rounds=None):
        for k in range(opts.get("rounds", 5)):
            if k > 0 and between_rounds is not None:
                between_rounds(k - 1)
            for _ in range(3):
                cand()
        return {"candidate_ms": {"median": 1.0}, "timing_method": "events_cold_l2"}

    monkeypatch.setattr(timing, "measure_pair", fake_measure)
    monkeypatch.setattr(timing, "_synchronize", lambda: None)
    return _run_time_cases(_Task(cand_fn), {"time_reference": False, "rounds": rounds})


def test_output_cached_by_input_address_is_caught(monkeypatch):
    # Computes once per input address and returns a copy afterwards (fresh memory, so not `cached_output`):
    # the timed inputs take new values between rounds, so the last output is stale.
    cache = {}

    def by_address(x):
        if x.data_ptr() not in cache:
            cache[x.data_ptr()] = torch.relu(x)
        return cache[x.data_ptr()].clone()

    for rounds in (2, 3, 4, 5):   # whatever the number of rounds, the last one runs on other values
        cache.clear()
        assert "timed_output_mismatch" in _time_cases_with_events(monkeypatch, by_address, rounds=rounds), rounds
        assert "timed_output_mismatch" not in _time_cases_with_events(monkeypatch, lambda x: torch.relu(x), rounds)
    # one round (kiln optimize's short timing): nothing to refresh between, nothing flagged
    cache.clear()
    assert "timed_output_mismatch" not in _time_cases_with_events(monkeypatch, by_address, rounds=1)


def test_copy_values():
    a, b = [torch.zeros(3), {"k": torch.zeros(2, dtype=torch.int64)}], [torch.ones(3), {"k": torch.tensor([4, 5])}]
    assert timing.copy_values(a, b) and a[0].tolist() == [1.0, 1.0, 1.0] and a[1]["k"].tolist() == [4, 5]
    assert not timing.copy_values([torch.zeros(3)], [torch.zeros(4)])
    assert not timing.copy_values([torch.zeros(1).expand(3)], [torch.ones(3)])   # stride 0: left alone


def test_no_second_draw_no_refresh(monkeypatch):
    # a task whose second draw fails (no memory for it) is timed on its first draw, without a verdict
    class _Failing(_Task):
        def inputs(self, case, seed):
            if seed != 7:
                raise MemoryError("no room for a second set")
            return super().inputs(case, seed)

    monkeypatch.setattr(timing, "measure_pair", lambda cand, refw, opts, between_rounds=None:
                        ([between_rounds(k) for k in range(4)], cand(), {"candidate_ms": {"median": 1.0}})[2])
    monkeypatch.setattr(timing, "_synchronize", lambda: None)

    codes = _run_time_cases(_Failing(lambda x: torch.relu(x)), {"time_reference": False, "rounds": 5})
    # (no Triton under the stand-in: no_triton_launch is expected; nothing else)
    assert codes == ["no_triton_launch"], codes


def _partial_writer(x):
    """A reference that leaves rows of its `torch.empty` output unwritten (TritonBench-G block_sparse_attn:
    CSR rows with no blocks)."""
    out = torch.empty_like(x)
    out[: x.shape[0] // 2] = torch.relu(x[: x.shape[0] // 2])
    return out


def test_rows_the_reference_never_writes_give_no_verdict():
    # The replayed graph's output was poisoned (NaN) and the graph writes what the reference writes: the
    # NaN rows are memory nobody writes. The reference's first run has them poisoned as well (as in the
    # check's calls), so the two agree; a run with that memory finite would disagree with itself.
    x = torch.randn(64, 32)
    junk = torch.full((64, 32), 3.0)   # what the allocator held: the earlier reference run read this
    del junk
    out = _partial_writer(x)
    out[32:] = float("nan")
    assert timing.check_timed_output(out, _partial_writer, [x], {}, {}, False) is None


def test_work_cut_on_written_rows_is_still_caught():
    x = torch.randn(64, 32)
    out = _partial_writer(x)
    out[32:] = float("nan")
    out[:16] = 0.0           # the timed call skipped rows the reference writes
    assert timing.check_timed_output(out, _partial_writer, [x], {}, {}, False)


def test_reference_that_draws_its_own_inputs_gives_no_verdict():
    # A TritonBench `test` case draws its inputs inside the call (unseeded while timed): the reference's
    # runs disagree on written elements, so nothing is decided (the few elements that happened to agree
    # between two draws were compared once, and 14 modules were rejected against themselves on an H100).
    def draws(x):
        return torch.relu(torch.randn(256)) + x.sum() * 0
    x = torch.randn(4)
    assert timing.check_timed_output(draws(x), draws, [x], {}, {}, False) is None


def _half_written(x):
    """Writes the first half of a fresh (torch.empty) output, as TritonBench-G's block_sparse_attn stores 2 of
    its 4 D-blocks. Its output memory is a block recycled from a NaN-filled tensor, as the caching allocator
    hands out a block an earlier poisoning left NaN."""
    n = x.numel()
    scratch = torch.full((n,), float("nan"))
    del scratch
    out = torch.empty(n)
    out[: n // 2] = x.flatten()[: n // 2] * 2
    return out


def test_output_half_unwritten_by_the_reference_is_set_aside():
    # H100 session 11, block_sparse_attn perf_6: the reference's second run (finite fill) got recycled memory
    # still holding NaN, so 186368 of the 524288 elements it never writes looked determined (NaN in both
    # runs) and the candidate's leftovers there (finite, from its earlier timed calls) were a mismatch.
    x = torch.randn(1024)
    cand = _half_written(x)
    cand[512:] = 3.0       # what the timed call's recycled memory held there
    assert timing.check_timed_output(cand, _half_written, [x], {}, {}, False) is None
    cand[:4] = 0.0         # a wrong written element is still caught
    msg = timing.check_timed_output(cand, _half_written, [x], {}, {}, False)
    assert msg and "determines" in msg, msg
