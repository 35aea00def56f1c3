"""Attribution of the work a candidate call does: which kernels ran and who launched them, and at what
precision its own dots run (docs/verdicts.md, "Attribution").

- Dispatcher (interpreter and GPU): the aten operators the candidate dispatched outside its own Triton
  launches (guards.OpRecorder). Operators in the allowance (guards.STRUCTURAL: allocation, fills, views,
  layout copies, random generators) and operators on data smaller than 1% of the largest task tensor do not
  count; any other is computation done by torch.
- Profiler (GPU): the device's own activity records (torch.profiler over CUPTI): every kernel that ran, its
  name and duration. Kernels compiled from the candidate's @triton.jit source are matched to the launches the
  worker saw (by name and count); the rest are foreign. Foreign kernels whose names say they only fill, copy
  or set memory are allowed; the others are computation outside the candidate's kernels, whatever Python
  name reached them (torch.compile's kernels, cuBLAS, an extension).
- Dot precision: each own kernel's dots, from its TTIR (GPU: the compiled kernel) or from the interpreter's
  dot (operand dtype and input precision), ranked against the task's dtype.
"""
from __future__ import annotations

import contextlib
import re

import torch

from . import guards
from . import platform as plat

# Kernel names (profiler) of work that computes nothing: fills, copies, memsets, index/range factories, RNG.
ALLOWED_KERNEL_RE = re.compile(
    r"FillFunctor|fill_kernel|direct_copy_kernel|copy_kernel|CatArrayBatchedCopy|Memcpy|Memset|"
    r"memcpy|memset|RandomFromTo|distribution_elementwise|normal_kernel|uniform_kernel|arange|range_factory|"
    r"linspace|index_elementwise_kernel|cudaMemcpy|cudaMemset|launch_clamp_scalar.*copy", re.I)
# Foreign computation above this share of the call's GPU time is rejected (foreign_kernel).
FOREIGN_SHARE_MAX = 0.10


# ----------------------------------------------------------------------------------------------
# Dispatcher attribution
# ----------------------------------------------------------------------------------------------

def compute_ops(calls, floor):
    """(op, shapes) -> count of the recorded compute ops whose largest operand has >= floor elements."""
    out = {}
    for name, shapes, numel in calls:
        if numel < floor or name in guards.STRUCTURAL:
            continue
        k = (name, shapes)
        out[k] = out.get(k, 0) + 1
    return out


def op_summary(ops: dict, n=4) -> str:
    by = {}
    for (name, _), c in ops.items():
        by[name] = by.get(name, 0) + c
    top = sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))
    s = ", ".join(f"{k} x{c}" for k, c in top[:n])
    return s + (f", +{len(top) - n} more" if len(top) > n else "")


def judge_dispatch(ev, task_numel):
    """Adds torch_compute when the candidate's own code made torch compute on task-sized data: with a torch
    reference any such op; with a Triton reference (TritonBench-G, kiln without reference: its wrappers use
    torch legitimately) the ops it runs more often than the reference does. Returns the attribution record
    (op counts and the share of the candidate's work in its own launches, by count)."""
    floor = max(1, task_numel // 100)
    worst, own_total, foreign_total, foreign_ops = None, 0, 0, {}
    for (case, ccalls, own), (_, rcalls, rlaunch) in zip(ev.cand_ops, ev.ref_ops):
        c, r = compute_ops(ccalls, floor), compute_ops(rcalls, floor)
        foreign = dict(c) if rlaunch == 0 else {k: n - r.get(k, 0) for k, n in c.items() if n > r.get(k, 0)}
        own_total += own
        n_foreign = sum(foreign.values())
        foreign_total += n_foreign
        for (name, _), k in foreign.items():
            foreign_ops["aten::" + name] = foreign_ops.get("aten::" + name, 0) + k
        if foreign and worst is None:
            worst = (case, foreign, own, rlaunch)
    total = own_total + foreign_total
    rec = {"method": "dispatcher", "own_launches": own_total, "foreign_compute_ops": foreign_total,
           "foreign_ops": foreign_ops, "own_share": round(own_total / total, 4) if total else None}
    if worst is not None:
        case, foreign, own, rlaunch = worst
        n = sum(foreign.values())
        share = own / (own + n) if own + n else 0.0
        where = "where the reference does not" if rlaunch else "on task-sized data"
        ev.reasons.add("torch_compute",
                       f"torch computed inside the candidate {where} (case {case!r}): {op_summary(foreign)}; "
                       f"{own} of {own + n} compute steps ({share:.0%}) were the candidate's own Triton launches")
    return rec


# ----------------------------------------------------------------------------------------------
# Profiler attribution (GPU)
# ----------------------------------------------------------------------------------------------

class Trace:
    def __init__(self):
        self.kernels = []     # (name, microseconds) in order
        self.error = None


@contextlib.contextmanager
def kernel_trace(enabled=True):
    """The device's kernel records while the body runs (GPU only; None under the interpreter)."""
    if plat.INTERPRET or not enabled:
        yield None
        return
    tr = Trace()
    try:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as e:  # noqa: BLE001 - no CUPTI: the dispatcher rule still applies
        tr.error = f"{type(e).__name__}: {e}"[:200]
        yield tr
        return
    try:
        yield tr
    finally:
        try:
            torch.cuda.synchronize()
            prof.__exit__(None, None, None)
            for e in prof.events():
                if e.device_type == torch.autograd.DeviceType.CUDA:
                    tr.kernels.append((e.name, max(0.0, float(e.time_range.end - e.time_range.start))))
        except Exception as e:  # noqa: BLE001
            tr.error = f"{type(e).__name__}: {e}"[:200]


def short_name(name: str, n=60) -> str:
    """A kernel's name without C++ template arguments and parameter lists, at most n characters."""
    s = name
    for _ in range(8):
        t = re.sub(r"<[^<>]*>", "", s)
        if t == s:
            break
        s = t
    s = re.sub(r"\([^()]*\)", "", s).replace("void ", "").strip()
    return s if len(s) <= n else s[:n - 3] + "..."


def split_kernels(trace, own_names):
    """-> (own us, allowed [(name, us)], foreign [(name, us)]); own_names: Counter of own launches."""
    left = dict(own_names)
    own, allowed, foreign = 0.0, [], []
    for name, us in trace.kernels:
        if left.get(name, 0) > 0:
            left[name] -= 1
            own += us
        elif ALLOWED_KERNEL_RE.search(name):
            allowed.append((name, us))
        else:
            foreign.append((name, us))
    return own, allowed, foreign


def _group(items):
    out = {}
    for name, us in items:
        k = short_name(name)
        n, t = out.get(k, (0, 0.0))
        out[k] = (n + 1, t + us)
    return out


def judge_profile(ev):
    """From the kernel traces of the candidate's calls (and the reference's, for Triton references): the
    share of GPU time in the candidate's own kernels; foreign_kernel when other computing kernels took more
    than FOREIGN_SHARE_MAX of it (with a Triton reference, kernels the reference also launches are not
    foreign). -> the attribution record, or None without traces."""
    pairs = [(t, r) for t, r in zip(ev.cand_traces, ev.ref_traces) if t is not None]
    if not pairs:
        return None
    own_us, allowed_us, foreign = 0.0, 0.0, []
    errors = [t[1].error for t, _ in pairs if t[1].error]
    for (case, tr, own_names), ref_tr in pairs:
        o, a, f = split_kernels(tr, own_names)
        if ref_tr is not None:   # Triton reference: its own torch kernels are the task's, not the candidate's
            budget = {}
            for name, _ in ref_tr.kernels:
                budget[name] = budget.get(name, 0) + 1
            kept = []
            for name, us in f:
                if budget.get(name, 0) > 0:
                    budget[name] -= 1
                    a.append((name, us))
                else:
                    kept.append((name, us))
            f = kept
        own_us += o
        allowed_us += sum(us for _, us in a)
        foreign += [(case, n, us) for n, us in f]
    foreign_us = sum(us for _, _, us in foreign)
    total = own_us + allowed_us + foreign_us
    groups = _group([(n, us) for _, n, us in foreign])
    top = sorted(groups.items(), key=lambda kv: -kv[1][1])
    computing = own_us + foreign_us   # without fills and copies (the worker's own poison fills among them)
    rec = {"method": "profiler", "own_share": round(own_us / total, 4) if total else None,
           "own_share_of_compute": round(own_us / computing, 4) if computing else None,
           "own_ms": round(own_us / 1e3, 4), "allowed_ms": round(allowed_us / 1e3, 4),
           "foreign_ms": round(foreign_us / 1e3, 4),
           "foreign_kernels": [{"name": k, "count": n, "ms": round(us / 1e3, 4),
                                "share": round(us / total, 4) if total else None} for k, (n, us) in top[:8]]}
    if errors:
        rec["error"] = errors[0]
    if total and foreign_us / total > FOREIGN_SHARE_MAX:
        names = ", ".join(f"{k} ({us / total:.0%})" for k, (_, us) in top[:3])
        ev.reasons.add("foreign_kernel", f"kernels the candidate's Triton source did not compile took "
                                         f"{foreign_us / total:.0%} of its GPU time: {names}")
    return rec


# ----------------------------------------------------------------------------------------------
# Dot precision
# ----------------------------------------------------------------------------------------------

# Higher is more precise. tf32x3 / bf16x6 reach about fp32's accuracy; plain tf32 keeps a 10-bit mantissa.
RANK = {"fp64": 6, "ieee": 5, "tf32x3": 5, "bf16x6": 5, "bf16x3": 4, "tf32": 3, "fp16": 2, "bf16": 2,
        "fp8": 1, "int8": 0}
_TTIR_DOT = re.compile(r"\btt\.dot(?:_scaled)?\b[^:\n]*?(?:inputPrecision\s*=\s*(\w+))?\s*:\s*tensor<[^>]*?x([a-zA-Z]\w*)>")
_ELEM = {"f64": "fp64", "f32": None, "f16": "fp16", "bf16": "bf16", "i8": "int8", "ui8": "int8"}


def _precision(elem, input_precision):
    """One dot's precision from its operand element type and its input precision."""
    e = elem.lower()
    if e.startswith("f8") or e.startswith("float8") or e.startswith("fp8") or e.startswith("f4"):
        return "fp8"
    p = _ELEM.get(e, "ieee" if e in ("float32", "fp32") else None)
    if e in ("f32", "float32", "fp32"):
        ip = (input_precision or "ieee").lower()
        return ip if ip in RANK else "ieee"
    if e in ("float16", "fp16"):
        return "fp16"
    if e in ("bfloat16",):
        return "bf16"
    if e in ("float64", "fp64"):
        return "fp64"
    if e in ("int8", "uint8"):
        return "int8"
    return p or "ieee"


def dots_from_ttir(ttir: str) -> list:
    """Precisions of the dots of a kernel's TTIR (tt.dot prints inputPrecision unless it is ieee)."""
    out = []
    for m in _TTIR_DOT.finditer(ttir or ""):
        ip, elem = m.group(1), m.group(2)
        if "dot_scaled" in m.group(0):
            out.append("fp8")
        else:
            out.append(_precision(elem, ip))
    return sorted(set(out))


DOTS = {}   # (module, kernel name) -> set of precisions seen (own and reference kernels alike)
_installed = [False]


def install():
    """Records the precision of every dot: the interpreter's dot (operand dtype, input precision), or the
    compiled kernel's TTIR once per compiled kernel."""
    if _installed[0]:
        return
    _installed[0] = True
    if plat.INTERPRET:
        from triton.runtime import interpreter as interp
        orig = interp.InterpreterBuilder.create_dot

        def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
            try:
                if plat.LAUNCHES.launches:
                    last = plat.LAUNCHES.launches[-1]
                    name = (last["module"], last["name"])
                    ip = getattr(input_precision, "name", str(input_precision)).split(".")[-1]
                    DOTS.setdefault(name, set()).add(_precision(str(a.dtype), ip))
            except Exception:
                pass
            return orig(self, a, b, d, input_precision, max_num_imprecise_acc)
        interp.InterpreterBuilder.create_dot = create_dot
        return
    from triton.runtime.jit import JITFunction
    orig_run = JITFunction.run
    seen = {}

    def run(self, *args, **kwargs):
        kernel = orig_run(self, *args, **kwargs)
        try:
            if kernel is not None and id(kernel) not in seen:
                seen[id(kernel)] = kernel   # kept alive: ids stay unique
                prec = dots_from_ttir(kernel.asm.get("ttir", "") if hasattr(kernel, "asm") else "")
                if prec:
                    module = getattr(self, "module", None) or getattr(self.fn, "__module__", "")
                    DOTS.setdefault((module, self.fn.__name__), set()).update(prec)
        except Exception:
            pass
        return kernel
    JITFunction.run = run


def lowest(keys) -> str | None:
    ps = set()
    for k in keys:
        ps |= DOTS.get(k, set())
    return min(ps, key=lambda p: RANK.get(p, 5)) if ps else None


def task_precision(dtype: torch.dtype) -> str | None:
    return {torch.float32: "ieee", torch.float64: "fp64", torch.float16: "fp16",
            torch.bfloat16: "bf16"}.get(dtype)


def judge_precision(ev, out_dtype, own_keys, ref_keys, torch_reference, protocol):
    """reduced_precision when the candidate's lowest dot precision is below the task's: its output dtype for
    a torch reference (torch runs fp32 matmuls in IEEE fp32 by default), the reference's own lowest dot
    precision for a Triton reference. -> the precision record for the result."""
    cand = lowest(own_keys)
    task = task_precision(out_dtype) if out_dtype is not None else None
    if not torch_reference:
        ref = lowest(ref_keys)
        task = ref if ref is not None else task
        if ref is None and task == "ieee":
            task = "tf32"   # a Triton reference without dots seen: Triton's default for fp32 dots
    rec = {"candidate_dots": cand, "task": task}
    if cand is None or task is None:
        return rec
    if RANK.get(cand, 5) < RANK.get(task, 5):
        rec["reduced"] = True
        # legacy (1e-2 everywhere, as AutoTriton evaluated): reported, the tolerance decides
        ev.reasons.add("reduced_precision" if protocol != "legacy" else "reduced_precision_allowed",
                       f"the candidate's dots run at {cand} where the task computes at {task} "
                       f"(protocol {protocol}); kernels: {', '.join(sorted(n for _, n in own_keys))[:120]}")
    return rec
