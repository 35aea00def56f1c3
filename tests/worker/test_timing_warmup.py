"""The timing warmup is sized in GPU time (timing.Timer.warmup). Launches are asynchronous: a warmup loop
bounded by host time queued hundreds of calls of a long kernel (20 ms each: seconds of GPU time per case,
10 of an optimize run's 17 s baseline on an H100). A simulated GPU stands in for CUDA here: each call
queues `ms` of work, events record the queue's end, synchronize drains it."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import timing  # noqa: E402


class FakeGPU:
    def __init__(self, ms):
        self.ms, self.clock, self.calls = ms, 0.0, 0

    def kernel(self):
        self.calls += 1
        self.clock += self.ms      # GPU time; the host returns at once

    class Event:
        def __init__(self, enable_timing=True):
            self.t = None


def install(monkeypatch, gpu):
    monkeypatch.setattr(timing, "_Event", FakeGPU.Event)
    monkeypatch.setattr(timing, "_record", lambda ev: setattr(ev, "t", gpu.clock))
    monkeypatch.setattr(timing, "_elapsed", lambda s, e: e.t - s.t)
    monkeypatch.setattr(timing, "_synchronize", lambda: None)


def test_long_kernel_gets_a_short_warmup(monkeypatch):
    gpu = FakeGPU(20.0)
    install(monkeypatch, gpu)
    t = timing.Timer(gpu.kernel, {"cuda_graph": "never", "warmup_ms": 25})
    t.warmup()
    assert abs(t.est_ms - 20.0) < 1e-9
    assert gpu.calls <= 6, f"{gpu.calls} calls of a 20 ms kernel to warm up ({gpu.clock:.0f} ms of GPU time)"
    assert t.method == "events_cold_l2"


def test_short_kernel_gets_its_warmup_budget(monkeypatch):
    gpu = FakeGPU(0.1)
    install(monkeypatch, gpu)
    t = timing.Timer(gpu.kernel, {"cuda_graph": "never", "warmup_ms": 25})
    t.warmup()
    assert 250 <= gpu.calls <= 260, gpu.calls      # 25 ms of 0.1 ms calls, plus the timed ones
    assert abs(t.est_ms - 0.1) < 1e-9
