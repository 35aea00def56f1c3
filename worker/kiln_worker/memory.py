"""GPU memory as a budget (docs/eval.md, "Memory"): the task's own footprint (the reference's inputs and
outputs, measured once per request) beside the worker's peak GPU memory during the request, and the release of
cached blocks between requests."""
from __future__ import annotations

import gc
import weakref

import torch

from . import platform as plat


def tree_bytes(x, seen=None) -> int:
    """Bytes of the distinct tensor storages in a nested structure."""
    seen = set() if seen is None else seen
    if isinstance(x, torch.Tensor):
        try:
            key = (x.untyped_storage().data_ptr(), x.device.type)
            if key in seen:
                return 0
            seen.add(key)
            return int(x.untyped_storage().nbytes())
        except Exception:
            return int(x.numel() * x.element_size())
    if isinstance(x, (list, tuple)):
        return sum(tree_bytes(v, seen) for v in x)
    if isinstance(x, dict):
        return sum(tree_bytes(v, seen) for v in x.values())
    return 0


class Budget:
    """Measures one request: the footprint at its first trial, the peak of the worker's allocations."""

    def __init__(self):
        self.footprint = None
        self.base = 0
        self.oom_note = ""
        if not plat.INTERPRET:
            try:
                torch.cuda.reset_peak_memory_stats()
                self.base = int(torch.cuda.memory_allocated())
            except Exception:
                pass

    def note_task(self, inputs, outputs):
        if self.footprint is None:
            self.footprint = tree_bytes(inputs) + tree_bytes(outputs)

    def report(self) -> dict:
        out = {"footprint_bytes": self.footprint}
        if plat.INTERPRET:
            return out
        try:
            peak = int(torch.cuda.max_memory_allocated()) - self.base
            out["peak_bytes"] = peak
            out["peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
            if self.footprint:
                out["ratio"] = round(peak / self.footprint, 3)
        except Exception:
            pass
        return out


def release():
    """Between requests: drop what the last one left and give the allocator's cached blocks back."""
    gc.collect()
    if not plat.INTERPRET:
        try:
            torch.cuda.empty_cache()
        except Exception:
            pass


# Earlier outputs held strongly, in all, up to this many bytes (see History).
STRONG_BYTES = 1 << 30


class History:
    """Outputs of earlier calls, for the aliasing checks (output_aliases_reference, cached_output). Held
    strongly while their total stays under STRONG_BYTES: their memory cannot be reused, so an overlap with them
    is real. Beyond that (a 6 GiB output per trial would keep tens of GiB alive), they are held weakly: an
    output that only kiln held is freed and its memory may be reused legitimately, so only those still alive
    (held by someone else: a candidate that caches its output) are compared."""

    def __init__(self, cap=None):
        self.cap = STRONG_BYTES if cap is None else cap
        self.items = []        # ("s", tree) or ("w", [weakref to a tensor])
        self.bytes = 0

    def append(self, tree):
        from . import compare
        n = tree_bytes(tree)
        if self.bytes + n <= self.cap:
            self.items.append(("s", tree))
            self.bytes += n
            return
        refs = []
        for _, v in compare.flatten(tree):
            if isinstance(v, torch.Tensor):
                try:
                    refs.append(weakref.ref(v))
                except TypeError:
                    pass
        self.items.append(("w", refs))

    def storages(self):
        from . import compare
        out = []
        for kind, x in self.items:
            if kind == "s":
                out += compare.storages(x)
                continue
            for r in x:
                t = r()
                if t is not None:
                    out += compare.storages(t)
        return out

    def last(self):
        """The latest output when still held (else None)."""
        if not self.items:
            return None
        kind, x = self.items[-1]
        if kind == "s":
            return x
        alive = [r() for r in x]
        return alive if alive and all(t is not None for t in alive) else None


def _fingerprint(t: torch.Tensor):
    """Two sums over a tensor's bits (plain and position-weighted), CHUNK elements at a time, on its device."""
    from . import compare
    bits = compare._bits(t.detach())
    if not bits.is_contiguous():
        bits = bits.contiguous()
    flat = bits.reshape(-1)
    s1 = torch.zeros((), dtype=torch.int64, device=t.device)
    s2 = torch.zeros((), dtype=torch.int64, device=t.device)
    for i in range(0, flat.numel(), compare.CHUNK):
        c = flat[i:i + compare.CHUNK].to(torch.int64)
        w = (torch.arange(i, i + c.numel(), device=t.device, dtype=torch.int64) % 65521) + 1
        s1 += c.sum()
        s2 += (c * w).sum()
    return s1, s2


def snapshot(tree):
    """What the master inputs are checked against after the candidate ran: a clone while they are small (up to
    STRONG_BYTES), else per-tensor fingerprints (a clone of 6 GiB inputs would be 6 GiB more per trial)."""
    from . import compare, tasks
    if tree_bytes(tree) <= STRONG_BYTES:
        return ("clone", tasks.clone_tree(tree))
    return ("fingerprint", [(p, tuple(v.shape), v.dtype, _fingerprint(v)) for p, v in compare.flatten(tree)
                            if isinstance(v, torch.Tensor)])


def changed(tree, snap) -> list:
    """Paths of the tensors of `tree` that differ from the snapshot."""
    from . import compare
    kind, data = snap
    if kind == "clone":
        return compare.changed_paths(tree, data)
    now = [(p, v) for p, v in compare.flatten(tree) if isinstance(v, torch.Tensor)]
    if len(now) != len(data):
        return [p for p, _ in now] or ["out"]
    out = []
    for (p, v), (_, shape, dtype, (s1, s2)) in zip(now, data):
        if tuple(v.shape) != shape or v.dtype != dtype:
            out.append(p)
            continue
        t1, t2 = _fingerprint(v)
        if not (bool(t1 == s1) and bool(t2 == s2)):
            out.append(p)
    return out


# A candidate's failed allocation is its own out_of_memory only when it asked for this many times the task's
# footprint (and at least 1 GiB); otherwise an out-of-memory error is the infrastructure's (a GPU shared with
# other workers, kiln's own copies), for the runner to retry alone.
OOM_FACTOR = 4
_UNITS = {"b": 1, "bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50,
          "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}


def requested_bytes(msg: str):
    """The size a failed allocation asked for, from torch's message ("Tried to allocate 20.00 GiB", "you tried
    to allocate 4503599627370496 bytes"); None when it does not say."""
    import re
    m = re.search(r"allocate\s+([0-9.]+)\s*([KMGTP]i?B|bytes|B)\b", msg, re.I)
    if not m:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def blame_oom(msg, in_candidate, budget, last_args):
    """None when the candidate alone asked for far more than the task needs (its out_of_memory, with both
    figures in budget.oom_note); else the infrastructure outcome's details."""
    asked = requested_bytes(msg)
    task = budget.footprint
    if task is None and last_args is not None:
        task = 2 * tree_bytes(last_args)    # before the reference ran: its inputs and an output as large
    budget.oom_note = (f"it asked for {asked} bytes; the task's footprint is {task} bytes"
                       if asked is not None else "")
    if in_candidate and asked is not None and asked >= max(1 << 30, OOM_FACTOR * (task or 0)):
        return None
    out = {"requested_bytes": asked, "footprint_bytes": task, "in_candidate": bool(in_candidate),
           "message": f"out of memory ({msg[:200]}): not the candidate's alone "
                      f"({'in its call' if in_candidate else 'outside its call'}; asked {asked} bytes, task "
                      f"footprint {task} bytes); retry alone on a fresh worker"}
    if not plat.INTERPRET:
        try:
            out["in_use_bytes"] = int(torch.cuda.memory_allocated())
            out["free_bytes"], out["total_bytes"] = (int(x) for x in torch.cuda.mem_get_info())
        except Exception:
            pass
    return out
