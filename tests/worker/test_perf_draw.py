"""A perf harness's sweep drawn on the GPU (tasks.TritonBenchTask._generate_perf_inputs) must keep what the
harness as written relies on. TritonBench-G context_attn_llama leaves its token index table `torch.empty`
(int32); drawn on the CPU those are fresh pages (zeros: row 0, valid), drawn on the GPU they were the
caching allocator's leftovers (indices far out of range: an illegal memory access at perf_7 on an H100,
while the module run plainly on the harness's CPU draw was fine). Fresh allocations of the draw are zeroed.
The GPU draw is exercised here with the CPU as its device (allocations there reuse freed blocks)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import platform as plat  # noqa: E402
from kiln_worker import tasks  # noqa: E402


class _Harness:
    """Draws like context_attn_llama's harness: an index table left empty, beside drawn values."""

    def get_input_tensors(self):
        self.input_tensors = []
        for n in (64, 4096):
            junk = torch.full((1000, n), 123456789, dtype=torch.int32)   # leftovers of earlier work
            del junk
            idx = torch.empty((1000, n), dtype=torch.int32)
            q = torch.empty((4, n), dtype=torch.float16).normal_(mean=0.1, std=0.2)
            self.input_tensors.append((q, idx))


def test_empty_allocations_of_the_gpu_draw_read_as_zeros(monkeypatch):
    monkeypatch.setattr(plat, "INTERPRET", False)
    monkeypatch.setattr(plat, "DEVICE", "cpu")
    sweep = tasks.TritonBenchTask._generate_perf_inputs(_Harness())
    assert len(sweep) == 2
    for q, idx in sweep:
        assert int(idx.abs().max()) == 0, "an index table the harness left empty holds leftovers"
        assert float(q.std()) > 0.1      # what the harness drew is kept


def test_zero_fresh_leaves_other_ops_alone():
    with tasks._ZeroFresh():
        a = torch.full((8,), 3.0)
        b = torch.empty(8)
        c = a.new_empty(4)
        d = torch.empty_like(a) + 1
    assert float(a.sum()) == 24.0 and float(b.abs().sum()) == 0 and float(c.abs().sum()) == 0
    assert float(d.sum()) == 8.0


def test_a_sweep_moved_to_the_host_is_not_kept_on_the_device(monkeypatch):
    # The harness instance serves every case afterwards (to_cuda, call_op): it must not keep the drawn
    # sweep. It did, so TritonBench-G's fast_rope_embedding held 32 GiB of GPU sweep beside its largest
    # case's copies and ran out of memory on an 80 GB budget (H200 capped at 79 GiB, session 15).
    import weakref
    monkeypatch.setattr(plat, "INTERPRET", False)
    monkeypatch.setattr(plat, "DEVICE", "cpu")
    drawn = []
    monkeypatch.setattr(tasks, "_to_cpu", lambda x: tuple(t.clone() for t in x))   # a copy, as off a GPU

    class H(_Harness):
        def get_input_tensors(self):
            super().get_input_tensors()
            drawn.extend(weakref.ref(t) for case in self.input_tensors for t in case)

    h = H()
    sweep = tasks.TritonBenchTask._generate_perf_inputs(h)
    assert len(sweep) == 2 and float(sweep[1][0].std()) > 0.1
    assert not getattr(h, "input_tensors", None), "the harness still holds its drawn sweep"
    import gc
    gc.collect()
    assert all(r() is None for r in drawn), "the drawn (device) tensors are still alive"
