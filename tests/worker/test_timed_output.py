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
