"""KILN_INPUTS_ON_DEVICE=1 (kiln datagen's GPU runs): a KernelBench task's get_inputs() draws on the worker's
device itself instead of on the host (then copied). The device here is the meta device, which a CPU has."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import platform as plat  # noqa: E402
from kiln_worker import tasks  # noqa: E402

PROGRAM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

def get_inputs():
    global DRAWN_ON
    x = torch.randn(4, 8)
    DRAWN_ON = x.device.type
    return [x]

def get_init_inputs():
    return []
'''


def _drawn_on(tmp_path, monkeypatch, flag):
    p = tmp_path / "prog.py"
    p.write_text(PROGRAM)
    monkeypatch.setattr(plat, "DEVICE", "meta")
    if flag is None:
        monkeypatch.delenv("KILN_INPUTS_ON_DEVICE", raising=False)
    else:
        monkeypatch.setenv("KILN_INPUTS_ON_DEVICE", flag)
    task = tasks.KernelBenchTask({"path": str(p)})
    task.load_reference()
    args, _ = task.inputs("default", 7)
    assert args[0].device.type == "meta"          # on the worker's device either way
    return task.ref_mod.DRAWN_ON


def test_kernelbench_inputs_are_drawn_on_the_host_by_default(tmp_path, monkeypatch):
    assert _drawn_on(tmp_path, monkeypatch, None) == "cpu"
    assert _drawn_on(tmp_path, monkeypatch, "0") == "cpu"


def test_kiln_inputs_on_device_draws_them_on_the_device(tmp_path, monkeypatch):
    assert _drawn_on(tmp_path, monkeypatch, "1") == "meta"
