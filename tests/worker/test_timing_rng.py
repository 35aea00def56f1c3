"""Timing a call that draws random numbers (issue 16). A CUDA graph cannot replay such a call as it ran,
and a failed capture left torch's CUDA generator marked as capturing: every later draw raised "Offset
increment outside graph capture encountered unexpectedly" (three TritonBench-G modules in mode time on an
H100). The timer now sees the draw on its first call (the generator's offset moves, or the call reseeds
it), times it with events and says so in the method, and renews the generator after any failed capture.
A simulated GPU and generator stand in for CUDA (see test_timing_warmup.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import timing  # noqa: E402
from test_timing_warmup import LaunchBoundGPU, install_graphs  # noqa: E402


class FakeGenerator:
    """torch.cuda's default generator as the timer sees it: a seed, a Philox offset, and torch's
    'capture underway' mark that a failed capture leaves set (draws then raise)."""

    def __init__(self):
        self.seed, self.offset, self.capturing, self.renewed = 1234, 0, False, 0

    def get_offset(self):
        return self.offset

    def set_offset(self, off):
        assert off % 4 == 0
        self.offset = off

    def initial_seed(self):
        return self.seed

    def manual_seed(self, s):
        self.seed, self.offset = s, 0

    def draw(self):
        if self.capturing:
            raise RuntimeError("Offset increment outside graph capture encountered unexpectedly.")
        self.offset += 4

    def graphsafe_get_state(self):
        return self   # shares the state, its capture mark included (as torch's does)

    def clone_state(self):
        c = FakeGenerator()
        c.seed, c.offset = self.seed, self.offset   # a copy: not capturing
        return c

    def graphsafe_set_state(self, other):
        self.seed, self.offset, self.capturing = other.seed, other.offset, other.capturing
        self.renewed += 1


def _draw_ok(gen):
    try:
        gen.draw()
        return True
    except RuntimeError:
        return False


def install_rng(monkeypatch, gpu, gen):
    install_graphs(monkeypatch, gpu)
    monkeypatch.setattr(timing, "_cuda_generator", lambda: gen)
    monkeypatch.setattr(timing, "_draw_ok", lambda: _draw_ok(gen))
    monkeypatch.setattr(timing, "_l2_buffer", lambda: None)
    real = timing._graph

    def capture(g):
        # torch registers the generator when a capture begins; a capture that raises never ends it
        gen.capturing = True
        cm = real(g)

        class CM:
            def __enter__(self):
                return cm.__enter__()

            def __exit__(self, *exc):
                cm.__exit__(*exc)
                if exc[0] is None:
                    gen.capturing = False
                return False
        return CM()
    monkeypatch.setattr(timing, "_graph", capture)


def test_drawing_call_is_timed_by_events_and_says_so(monkeypatch):
    gpu, gen = LaunchBoundGPU(0.002, 0.06), FakeGenerator()
    install_rng(monkeypatch, gpu, gen)
    captured = []

    def call():
        if gpu.capturing is not None:
            captured.append(1)
        gen.draw()
        gpu.kernel()

    t = timing.Timer(call, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert t.draws_random
    assert t.method == "events_cold_l2_rng" and t.graph is None, t.method
    assert not captured, "a call that draws random numbers was captured"
    assert len(t.samples(3)) == 3
    # "always" (a reference timed by graph because its candidate was) is not captured either
    r = timing.Timer(call, {"cuda_graph": "always", "warmup_ms": 5, "cold_l2": False})
    r.warmup()
    assert r.method == "events_rng" and not captured


def test_call_that_reseeds_then_draws_is_seen(monkeypatch):
    # seeding and drawing returns the generator to the same state after every call: only the probe's own
    # offset shows the draw
    gpu, gen = LaunchBoundGPU(0.002, 0.06), FakeGenerator()
    install_rng(monkeypatch, gpu, gen)

    def call():
        gen.manual_seed(1234)
        gen.draw()
        gpu.kernel()

    call()
    t = timing.Timer(call, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert t.method == "events_cold_l2_rng", t.method


def test_plain_call_is_still_captured(monkeypatch):
    gpu, gen = LaunchBoundGPU(0.002, 0.06), FakeGenerator()
    install_rng(monkeypatch, gpu, gen)
    t = timing.Timer(gpu.kernel, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert not t.draws_random and t.method == "cuda_graph"
    assert gen.renewed == 0


def test_failed_capture_renews_the_generator(monkeypatch):
    # a call that cannot be captured (a host sync, say) and draws nothing: the failed capture must not
    # leave the generator unusable for what runs next (the reference, the next candidate of the worker)
    gpu, gen = LaunchBoundGPU(0.002, 0.06), FakeGenerator()
    install_rng(monkeypatch, gpu, gen)

    def call():
        if gpu.capturing is not None:
            raise RuntimeError("operation not permitted when stream is capturing")
        gpu.kernel()

    t = timing.Timer(call, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert t.method == "events_cold_l2_nocapture" and t.graph is None  # the method says the capture failed
    assert gen.renewed == 1 and not gen.capturing
    gen.draw()   # raised "Offset increment outside graph capture" before the fix


def test_without_cuda_generator_nothing_changes(monkeypatch):
    gpu = LaunchBoundGPU(0.002, 0.06)
    install_graphs(monkeypatch, gpu)
    monkeypatch.setattr(timing, "_cuda_generator", lambda: None)
    assert timing.rng_probe_start() is None and timing.rng_probe_end(None) is False
    assert timing.renew_rng() is False
    t = timing.Timer(gpu.kernel, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert t.method == "cuda_graph"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
