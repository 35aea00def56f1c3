"""The device memory figure `kiln serve` shows in /v1/metrics (platform.gpu_memory): cudaMemGetInfo of the
worker's device on a GPU, nothing on the interpreter or when CUDA fails."""
import types

from kiln_worker import platform as plat


def test_none_on_the_interpreter(monkeypatch):
    monkeypatch.setattr(plat, "INTERPRET", True)
    assert plat.gpu_memory() is None


def test_reads_the_workers_device_and_an_explicit_one(monkeypatch):
    import torch
    asked = []

    def mem_get_info(index):
        asked.append(index)
        return (3 << 30, 80 << 30)

    monkeypatch.setattr(plat, "INTERPRET", False)
    monkeypatch.setattr(plat, "DEVICE_INDEX", 2)
    monkeypatch.setattr(torch, "cuda", types.SimpleNamespace(mem_get_info=mem_get_info))
    assert plat.gpu_memory() == {"free_bytes": 3 << 30, "total_bytes": 80 << 30}
    assert plat.gpu_memory(5)["total_bytes"] == 80 << 30
    assert asked == [2, 5]


def test_none_when_cuda_cannot_say(monkeypatch):
    import torch

    def broken(index):
        raise RuntimeError("CUDA driver initialization failed")

    monkeypatch.setattr(plat, "INTERPRET", False)
    monkeypatch.setattr(torch, "cuda", types.SimpleNamespace(mem_get_info=broken))
    assert plat.gpu_memory() is None
