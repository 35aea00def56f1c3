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


def _proc_status(*keys):
    """Fields of /proc/self/status in bytes (VmRSS: resident now, VmHWM: the peak since the last reset)."""
    import re
    with open("/proc/self/status") as f:
        text = f.read()
    return [int(re.search(rf"^{k}:\s+(\d+)\s*kB", text, re.M).group(1)) << 10 for k in keys]


class Budget:
    """Measures one request: the footprint (its largest case's), the peak of the worker's allocations. On a GPU,
    the peak of torch's CUDA allocator from the request's start; under the interpreter (tensors in host
    memory), the peak resident set of the process from the first trial on (/proc/self/status VmHWM, reset
    through /proc/self/clear_refs): large tensors are mapped and unmapped whole, so it follows them."""

    def __init__(self):
        self.footprint = None
        self.base = 0
        self.rss_base = None
        self.oom_note = ""
        if not plat.INTERPRET:
            try:
                torch.cuda.reset_peak_memory_stats()
                self.base = int(torch.cuda.memory_allocated())
            except Exception:
                pass

    def start_trials(self):
        """Interpreter: the peak counts from here (after loading the task and the candidate)."""
        if not plat.INTERPRET or self.rss_base is not None:
            return
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.rss_base = _proc_status("VmRSS")[0]
        except Exception:
            self.rss_base = None

    def note_task(self, inputs, outputs):
        """The task's footprint: the largest of its cases' (inputs and the reference's output). The first
        trial alone was the footprint before: a TritonBench module's `test` case (8 KiB for
        fast_rope_embedding) stood for its 32 GiB perf cases, so an honest candidate that ran out of memory
        at one would have been blamed for asking "far more than the task needs"."""
        self.footprint = max(self.footprint or 0, tree_bytes(inputs) + tree_bytes(outputs))

    def report(self) -> dict:
        out = {"footprint_bytes": self.footprint}
        if plat.INTERPRET:
            if self.rss_base is None:
                return out
            try:
                peak = max(0, _proc_status("VmHWM")[0] - self.rss_base)
            except Exception:
                return out
            out.update(peak_bytes=peak, peak_of="host_rss")
            if self.footprint:
                out["ratio"] = round(peak / self.footprint, 3)
            return out
        try:
            peak = int(torch.cuda.max_memory_allocated()) - self.base
            out["peak_bytes"] = peak
            out["peak_of"] = "cuda_allocator"
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


# Tensors up to this many bytes in all are cloned rather than fingerprinted (see snapshot).
STRONG_BYTES = 1 << 30


class History:
    """Outputs of earlier calls, for the aliasing checks (output_aliases_reference, cached_output): the byte
    ranges they covered, each with a weak reference to its storage. A storage's Python object lives exactly as
    long as the storage (torch keeps it for as long as any tensor or view uses the memory), so a range is
    compared while someone still holds that memory (a candidate that caches its output, even through another
    view of it) and dropped once it was freed, when the allocator may reuse it legitimately. Nothing is held
    strongly: holding earlier outputs would cost the task's output size per trial (issue 14's memory budget)."""

    def __init__(self):
        self.items = []        # per call: [(path, (start, end), weakref to the storage)]
        self.last_numel = 0    # elements of the latest output's largest tensor

    def append(self, tree):
        from . import compare
        refs, numel = [], 0
        ranges = dict(compare.storages(tree))
        for p, v in compare.flatten(tree):
            if not isinstance(v, torch.Tensor):
                continue
            numel = max(numel, v.numel())
            if p not in ranges:
                continue
            try:
                refs.append((p, ranges[p], weakref.ref(v.untyped_storage())))
            except (TypeError, RuntimeError):
                pass
        self.items.append(refs)
        self.last_numel = numel

    def storages(self):
        return [(p, rng) for refs in self.items for p, rng, r in refs if r() is not None]


# Master inputs larger than this are snapshot as fingerprints rather than cloned (see snapshot).
SNAPSHOT_CLONE_BYTES = 16 << 20


# Elements a program of the fingerprint kernel reads. Session 9 measured 1 << 16 on an H100 (1.5x peaks), where
# its first compile took 56 s (a block that large unrolls into a huge kernel); 4K elements a program make the same
# kernel small, for two int64 (16 bytes) of partial sums per 16 KiB of fp32 inputs (0.1%).
FP_BLOCK = 1 << 12
_FP_KERNEL = []


def _fingerprint_kernel():
    """The Triton kernel of _fingerprint (compiled on first use, after the worker chose interpreter or GPU)."""
    if not _FP_KERNEL:
        import triton
        import triton.language as tl

        @triton.jit
        def kiln_fingerprint_kernel(bits_ptr, n, key, part_ptr, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            b = tl.load(bits_ptr + offs, mask=mask, other=0).to(tl.int64)
            w = tl.randint(key, offs).to(tl.int64) | 1           # 32 secret random bits a position, odd
            tl.store(part_ptr + 2 * pid, tl.sum(b, axis=0))
            tl.store(part_ptr + 2 * pid + 1, tl.sum(b * w, axis=0))

        _FP_KERNEL.append(kiln_fingerprint_kernel)
    return _FP_KERNEL[0]


# Elements a step of the torch fingerprint (interpreter): three int64 temporaries of this size.
FP_CPU_CHUNK = 1 << 18


def _fingerprint(t: torch.Tensor, key: int):
    """Two sums over a tensor's bits on its device: a plain one and one weighted by random weights drawn from
    `key` (secret to the candidate: without them no change of the values can be made to keep the weighted sum,
    short of guessing). Nearly no temporaries, so that the check made while the task's inputs and both outputs
    are alive (after the reference) adds nothing to the trial's peak: on a GPU one Triton kernel draws the
    weights as it reads (two int64 per FP_BLOCK elements); in host memory (the interpreter, whose Triton is too
    slow for gigabytes) torch steps of FP_CPU_CHUNK elements."""
    from . import compare
    bits = compare._bits(t.detach())
    if not bits.is_contiguous():
        bits = bits.contiguous()
    flat = bits.reshape(-1)
    if flat.device.type == "cpu":
        return _fingerprint_torch(flat, key, FP_CPU_CHUNK)
    return _fingerprint_triton(flat, key)


def _fingerprint_triton(flat, key):
    n = flat.numel()
    if n == 0:
        z = torch.zeros((), dtype=torch.int64, device=flat.device)
        return z, z
    grid = (n + FP_BLOCK - 1) // FP_BLOCK
    part = torch.empty(2 * grid, dtype=torch.int64, device=flat.device)
    _fingerprint_kernel()[(grid,)](flat, n, key, part, BLOCK=FP_BLOCK)
    part = part.view(grid, 2).sum(0)
    return part[0], part[1]


def _fingerprint_torch(flat, key, step):
    s1 = torch.zeros((), dtype=torch.int64, device=flat.device)
    s2 = torch.zeros((), dtype=torch.int64, device=flat.device)
    g = torch.Generator(device=flat.device)
    g.manual_seed(key % (1 << 63))   # one stream of weights, drawn in order
    for i in range(0, flat.numel(), step):
        c = flat[i:i + step].to(torch.int64)
        w = torch.randint(1, 1 << 62, (c.numel(),), generator=g, device=flat.device, dtype=torch.int64)
        s1 += c.sum()
        s2 += (c * w).sum()
    return s1, s2


def snapshot(tree):
    """What the master inputs are checked against after the candidate (and the reference) ran: a clone while
    they are small (up to SNAPSHOT_CLONE_BYTES), else per-tensor fingerprints under a fresh secret key (a clone
    of 6 GiB inputs would be 6 GiB more per trial; the goal is 1.5x the task's footprint in all)."""
    from . import compare, tasks
    if tree_bytes(tree) <= SNAPSHOT_CLONE_BYTES:
        return ("clone", tasks.clone_tree(tree))
    import os
    key = int.from_bytes(os.urandom(8), "little") >> 2
    return ("fingerprint", key, [(p, tuple(v.shape), v.dtype, _fingerprint(v, key)) for p, v in compare.flatten(tree)
                                 if isinstance(v, torch.Tensor)])


def shapes_only(tree):
    """The tree with its tensors replaced by meta tensors of the same shapes and dtypes: what a result still
    needs of a trial's large inputs (element counts, work estimates) once they are freed."""
    if isinstance(tree, torch.Tensor):
        return torch.empty(tree.shape, dtype=tree.dtype, device="meta")
    if isinstance(tree, (list, tuple)):
        return type(tree)(shapes_only(v) for v in tree) if type(tree) in (list, tuple) else [shapes_only(v) for v in tree]
    if isinstance(tree, dict):
        return {k: shapes_only(v) for k, v in tree.items()}
    return tree


def changed(tree, snap) -> list:
    """Paths of the tensors of `tree` that differ from the snapshot."""
    from . import compare
    if snap[0] == "clone":
        return compare.changed_paths(tree, snap[1])
    _, key, data = snap
    now = [(p, v) for p, v in compare.flatten(tree) if isinstance(v, torch.Tensor)]
    if len(now) != len(data):
        return [p for p, _ in now] or ["out"]
    out = []
    for (p, v), (_, shape, dtype, (s1, s2)) in zip(now, data):
        if tuple(v.shape) != shape or v.dtype != dtype:
            out.append(p)
            continue
        t1, t2 = _fingerprint(v, key)
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
    if last_args is not None:
        # the case running now may be larger than any the reference finished: its inputs and an output as
        # large (`last_args` of a trial whose large inputs were freed are meta tensors of their shapes)
        task = max(task or 0, 2 * tree_bytes(last_args))
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
