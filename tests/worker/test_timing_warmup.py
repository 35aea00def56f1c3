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


class LaunchBoundGPU(FakeGPU):
    """Each Python call costs `host_ms` to issue (event timing sees max(host, GPU) per call); a captured
    graph replays the kernels alone (GPU time only)."""

    def __init__(self, ms, host_ms):
        super().__init__(ms)
        self.host_ms, self.capturing = host_ms, None

    def kernel(self):
        self.calls += 1
        if self.capturing is not None:
            self.capturing.n += 1
        else:
            self.clock += max(self.ms, self.host_ms)


def install_graphs(monkeypatch, gpu):
    import contextlib
    install(monkeypatch, gpu)

    class Graph:
        n = 0

        def replay(self):
            gpu.clock += getattr(gpu, "replay_ms", 0.0) + self.n * gpu.ms

    @contextlib.contextmanager
    def capture(g):
        gpu.capturing = g
        try:
            yield
        finally:
            gpu.capturing = None

    class Stream:
        def wait_stream(self, other):
            pass

    monkeypatch.setattr(timing, "_CUDAGraph", Graph)
    monkeypatch.setattr(timing, "_graph", capture)
    monkeypatch.setattr(timing.torch.cuda, "Stream", Stream)
    monkeypatch.setattr(timing.torch.cuda, "current_stream", lambda: Stream())
    monkeypatch.setattr(timing.torch.cuda, "stream", lambda s: contextlib.nullcontext())


def test_launch_bound_short_kernel_is_timed_by_graph(monkeypatch):
    # 2 us of GPU work behind 60 us of Python per call: events see 60 us (over the 50 us threshold), the
    # graph 2 us. The method must follow the GPU time, or it flips between runs with the host's speed.
    for host_ms in (0.03, 0.06, 0.2):
        gpu = LaunchBoundGPU(0.002, host_ms)
        install_graphs(monkeypatch, gpu)
        t = timing.Timer(gpu.kernel, {"cuda_graph": "auto", "warmup_ms": 5})
        t.warmup()
        assert t.method == "cuda_graph", (host_ms, t.method, t.est_ms)
        assert abs(t.graph_ms - 0.002) < 1e-9
        assert t.samples(3) == [0.002, 0.002, 0.002] or all(abs(v - 0.002) < 1e-9 for v in t.samples(3))


def test_gpu_bound_kernel_is_timed_by_events(monkeypatch):
    # 0.3 ms of GPU time: the probe graph shows it is not short; events with a cold L2 time it.
    gpu = LaunchBoundGPU(0.3, 0.06)
    install_graphs(monkeypatch, gpu)
    monkeypatch.setattr(timing, "_l2_buffer", lambda: None)
    t = timing.Timer(gpu.kernel, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert t.method == "events_cold_l2" and t.graph is None and t.per_graph == 1
    assert abs(t.graph_ms - 0.3) < 1e-9
    assert all(abs(v - 0.3) < 1e-9 for v in t.samples(3))


def test_long_kernel_is_not_captured(monkeypatch):
    gpu = LaunchBoundGPU(5.0, 0.06)
    install_graphs(monkeypatch, gpu)
    t = timing.Timer(gpu.kernel, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    assert t.method == "events_cold_l2" and t.graph_ms is None


def warm_auto(monkeypatch, ms, host_ms, replay_ms):
    """A Timer in auto mode warmed up on a launch-bound fake GPU whose graph replay costs `replay_ms`."""
    gpu = LaunchBoundGPU(ms, host_ms)
    gpu.replay_ms = replay_ms
    install_graphs(monkeypatch, gpu)
    t = timing.Timer(gpu.kernel, {"cuda_graph": "auto", "warmup_ms": 5})
    t.warmup()
    return t


def test_graph_is_sized_on_gpu_time(monkeypatch):
    # A replay costs 4 us of its own. Sized from the event estimate (the host's 60 us per call) the graph
    # held 8 calls of a 2 us kernel and every sample read 2.5 us (+25%); sized on the graph's GPU time it
    # holds 200 and reads within 1%.
    t = warm_auto(monkeypatch, 0.002, 0.06, 0.004)
    assert t.method == "cuda_graph" and t.per_graph == timing.GRAPH_MAX_CALLS, t.per_graph
    assert t.graph.n == t.per_graph
    assert all(abs(v - 0.002) / 0.002 < 0.01 for v in t.samples(3)), t.samples(3)
    # a reference timed by graph because the candidate was ("always") is sized the same way
    gpu2 = LaunchBoundGPU(0.002, 0.01)
    gpu2.replay_ms = 0.004
    install_graphs(monkeypatch, gpu2)
    r = timing.Timer(gpu2.kernel, {"cuda_graph": "always", "warmup_ms": 5})
    r.warmup()
    assert r.method == "cuda_graph" and r.per_graph == timing.GRAPH_MAX_CALLS, r.per_graph


def test_probe_replay_cost_does_not_decide_the_method(monkeypatch):
    # 38 us of GPU work behind 0.26 ms of Python per call, a replay costing 20 us of its own (on an H200,
    # rms_rbe_matmul's finalist): the event estimate sizes the probe graph at one call, which reads 58 us,
    # over the 50 us threshold, and the call was timed by events, host-bound (0.26 ms: its 10.8x read 1.5x).
    # The probe is sized again on GPU time and measured again before the method is decided: a graph, 38 us.
    monkeypatch.setattr(timing, "_l2_buffer", lambda: None)
    t = warm_auto(monkeypatch, 0.038, 0.26, 0.02)
    assert t.method == "cuda_graph", (t.method, t.graph_ms, t.per_graph)
    assert t.per_graph > 1 and t.graph.n == t.per_graph
    assert all(abs(v - 0.038) / 0.038 < 0.1 for v in t.samples(3)), t.samples(3)
    # GPU-bound beyond the threshold whatever the replay's cost: still events with a cold L2
    t = warm_auto(monkeypatch, 0.08, 0.26, 0.02)
    assert t.method == "events_cold_l2" and t.graph is None and t.per_graph == 1, (t.method, t.per_graph)
