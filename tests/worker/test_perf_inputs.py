"""The perf harness's input sweep is drawn with the GPU as the default device (tasks.Task._generate_perf_inputs):
harnesses draw gigabytes with torch.rand on the CPU, 4-12 s per process on an H100 host. Without a GPU here,
the device is stood in for by the CPU (or 'meta', which a harness needing CPU tensors refuses): the test checks that the harness runs under the device
context, that a harness needing CPU tensors falls back to its own CPU draw, and that the draw is seeded."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import platform as plat  # noqa: E402
from kiln_worker import tasks  # noqa: E402


class Harness:
    def __init__(self, numpy=False):
        self.numpy = numpy
        self.devices = []

    def get_input_tensors(self):
        self.devices.append(str(torch.get_default_device()))
        x = torch.rand(16)
        if self.numpy and str(torch.get_default_device()) != "cpu":
            raise TypeError("can't convert cuda tensor to numpy")   # what x.numpy() raises on a GPU tensor
        self.input_tensors = [(x, torch.rand(4))]


def _gpu_like(monkeypatch, device="cpu"):
    monkeypatch.setattr(plat, "INTERPRET", False)
    monkeypatch.setattr(plat, "DEVICE", device)


def test_drawn_under_the_device_context(monkeypatch):
    # 'cpu' as the stand-in device: the context is entered (default device set) and the sweep kept
    _gpu_like(monkeypatch)
    monkeypatch.setattr(tasks, "_device_bytes", lambda: 1 << 40)
    h = Harness()
    out = _gen()(h, keep_on_device=True)
    assert h.devices == ["cpu"] and len(out) == 1 and out[0][0].numel() == 16


def test_moved_to_the_host_unless_kept(monkeypatch):
    # 'meta' as the stand-in device (the draw lands off the host): moved to the host by default, and when
    # the sweep is larger than a quarter of the device; kept only for the measuring worker when it fits
    _gpu_like(monkeypatch, device="meta")
    moved = []
    monkeypatch.setattr(tasks, "_to_cpu", lambda x: moved.append(x) or x)
    monkeypatch.setattr(tasks, "_device_bytes", lambda: 1 << 40)
    _gen()(Harness())
    assert len(moved) == 1
    _gen()(Harness(), keep_on_device=True)
    assert len(moved) == 1
    monkeypatch.setattr(tasks, "_device_bytes", lambda: 64)
    _gen()(Harness(), keep_on_device=True)
    assert len(moved) == 2


def _gen():
    for v in vars(tasks).values():
        if isinstance(v, type) and hasattr(v, "_generate_perf_inputs"):
            return v._generate_perf_inputs
    raise AssertionError("no task class with _generate_perf_inputs")


def test_harness_needing_cpu_falls_back(monkeypatch):
    _gpu_like(monkeypatch, device="meta")   # any non-CPU default device: the harness refuses it
    h = Harness(numpy=True)
    out = _gen()(h)
    assert h.devices == ["meta", "cpu"], h.devices       # tried on the device, then drawn as written
    assert out[0][0].device.type == "cpu"


def test_seeded(monkeypatch):
    _gpu_like(monkeypatch)
    monkeypatch.setattr(tasks, "_device_bytes", lambda: 1 << 40)
    a, b = _gen()(Harness(), keep_on_device=True), _gen()(Harness(), keep_on_device=True)
    assert torch.equal(a[0][0], b[0][0])


def test_interpreter_draws_as_written(monkeypatch):
    monkeypatch.setattr(plat, "INTERPRET", True)
    h = Harness()
    _gen()(h)
    assert h.devices == ["cpu"]
