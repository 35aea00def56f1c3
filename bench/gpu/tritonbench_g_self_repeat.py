#!/usr/bin/env python3
"""Is a TritonBench-G module deterministic at its perf harness's sizes? A plain check, outside kiln.

    python3 bench/gpu/tritonbench_g_self_repeat.py [--corpus DIR] [--cases all|largest:K|I,J] NAME [NAME ...]

For each named module: the module's code above TritonBench's separator is imported as
`TritonBench_v1.<name>` (what the perf harness imports), the harness draws its input sweep as written
(seeded), and for each case the harness's `call_op` runs twice, each time on its own copy of the same
inputs (`to_cuda` of a clone), with the caching allocator's free memory filled with NaN before the first
run and with 1500.0 before the second (a kernel that reads memory nobody wrote shows it). Printed per case:
`same`, `differs` (outputs, or the inputs as each run left them: element counts and the largest
difference), or `fault` (the exception). No kiln code is used: torch, triton and the corpus only.
Writes one JSON line per module to --out (default $OUT/self_repeat.jsonl when OUT is set).
"""
import argparse
import importlib.util
import json
import os
import sys
import time
import traceback
import types

import torch

SEP = "#" * 146


def load_top(path, modname):
    """The code above the separator, plus the module-level imports below it (an import of the whole file runs
    them too: block_sparse_attn's wrapper uses `torch`, imported only below its separator)."""
    text = open(path).read()
    top, _, bottom = text.partition(SEP)
    imports = "\n".join(l for l in bottom.splitlines() if l.startswith(("import ", "from ")))
    mod = types.ModuleType(modname)
    mod.__file__ = path
    sys.modules[modname] = mod
    exec(compile(top, path, "exec"), mod.__dict__)
    exec(compile(imports, path, "exec"), mod.__dict__)
    return mod


def load_harness(corpus, name):
    g = os.path.join(corpus, "tritonbench", "G")
    for pkg in ("TritonBench_v1", "TorchBench_v1"):
        if pkg not in sys.modules:
            p = types.ModuleType(pkg)
            p.__path__ = []
            sys.modules[pkg] = p
    mod = load_top(os.path.join(g, "kernels", name + ".py"), "TritonBench_v1." + name)
    for pkg in ("TritonBench_v1", "TorchBench_v1"):
        sys.modules[f"{pkg}.{name}"] = mod
        setattr(sys.modules[pkg], name, mod)
    perf_dir = os.path.join(g, "perf")
    if perf_dir not in sys.path:
        sys.path.insert(0, perf_dir)
    spec = importlib.util.spec_from_file_location(f"perf_{name}", os.path.join(perf_dir, name + "_perf.py"))
    pm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pm)
    return pm.performance_metrics()


def clone(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(v) for v in x)
    if isinstance(x, dict):
        return {k: clone(v) for k, v in x.items()}
    return x


def flatten(x, path=""):
    if isinstance(x, torch.Tensor):
        return [(path, x)]
    if isinstance(x, (list, tuple)):
        return [p for i, v in enumerate(x) for p in flatten(v, f"{path}[{i}]")]
    if isinstance(x, dict):
        return [p for k in sorted(x, key=str) for p in flatten(x[k], f"{path}[{k!r}]")]
    return [(path, x)]


def diff(a, b):
    """-> None when `a` and `b` are the same (NaN equal to NaN), else a short description."""
    fa, fb = flatten(a), flatten(b)
    if len(fa) != len(fb):
        return f"structure: {len(fa)} vs {len(fb)} leaves"
    out = []
    for (p, x), (_, y) in zip(fa, fb):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            out.append(f"{p or 'out'}: tensor vs value")
        elif not isinstance(x, torch.Tensor):
            if x != y and not (x != x and y != y):
                out.append(f"{p or 'out'}: {x!r} vs {y!r}")
        elif x.shape != y.shape or x.dtype != y.dtype:
            out.append(f"{p or 'out'}: {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}")
        else:
            xs, ys = x.detach(), y.detach()
            if xs.dtype.is_complex:
                xs, ys = torch.view_as_real(xs), torch.view_as_real(ys)
            xf, yf = xs.double(), ys.double()
            same = (xf == yf) | (torch.isnan(xf) & torch.isnan(yf))
            n = int((~same).sum())
            if n:
                d = (xf - yf).abs()[~same]
                fin = d[torch.isfinite(d)]
                nan = int((torch.isnan(xf) ^ torch.isnan(yf)).sum())
                out.append(f"{p or 'out'}: {n} of {x.numel()} elements differ"
                           f" (max abs {float(fin.max()) if fin.numel() else float('nan'):.3g}, NaN in one run only: {nan})")
    return "; ".join(out) or None


def flood(value):
    """Fills the free memory the caching allocator holds (and up to 2 GiB more) with `value`."""
    torch.cuda.synchronize()
    free, _ = torch.cuda.mem_get_info()
    n = int(min(free * 0.25, 2 << 30)) // 4
    if n > 0:
        t = torch.full((n,), value, dtype=torch.float32, device="cuda")
        del t
    torch.cuda.synchronize()


def run_case(inst, raw):
    runs = []
    for value in (float("nan"), 1500.0):
        flood(value)
        x = inst.to_cuda(clone(raw))
        before = clone(x)
        out = inst.call_op(x)
        torch.cuda.synchronize()
        runs.append((before, x, clone(out)))
        del out
    (b1, x1, o1), (b2, x2, o2) = runs
    notes = []
    d = diff(o1, o2)
    if d:
        notes.append("outputs: " + d)
    d = diff(x1, x2)
    if d:
        notes.append("inputs after the call: " + d)
    mutated = diff(b1, x1) is not None
    return ("differs" if notes else "same"), "; ".join(notes), mutated


def pick(cases, n, sizes):
    if cases == "all":
        return list(range(n))
    if cases.startswith("largest:"):
        k = int(cases.split(":")[1])
        return sorted(sorted(range(n), key=lambda i: (sizes[i], i))[-k:])
    return [int(i) for i in cases.split(",") if int(i) < n]


def nbytes(x):
    return sum(v.numel() * v.element_size() for _, v in flatten(x) if isinstance(v, torch.Tensor))


def load_sweep(corpus, name, cases):
    """-> (the harness, its input sweep drawn as written with the fixed seed, the indices `cases` picks)."""
    torch.manual_seed(4321)
    inst = load_harness(corpus, name)
    inst.get_input_tensors()
    sweep = list(inst.input_tensors)
    return inst, sweep, pick(cases, len(sweep), [nbytes(x) for x in sweep])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("KILN_CORPUS_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "corpus"))
    ap.add_argument("--cases", default="all")
    ap.add_argument("--out", default=os.path.join(os.environ["OUT"], "self_repeat.jsonl") if os.environ.get("OUT") else None)
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    out = open(a.out, "a") if a.out else None
    for name in a.names:
        t0 = time.monotonic()
        rec = {"name": name, "cases": {}}
        try:
            inst, sweep, idx = load_sweep(a.corpus, name, a.cases)
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"{type(e).__name__}: {e}"[:400]
            print(f"{name}: harness error {rec['error']}", flush=True)
            idx, sweep = [], []
        for i in idx:
            try:
                res, note, mutated = run_case(inst, sweep[i])
            except Exception as e:  # noqa: BLE001
                res, note, mutated = "fault", f"{type(e).__name__}: {str(e)[:300]}", None
                tb = traceback.extract_tb(e.__traceback__)
                if tb:
                    note += f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})"
                try:
                    torch.cuda.empty_cache()
                except Exception:  # noqa: BLE001 - the context is dead (an illegal address): say so, stop
                    pass
            rec["cases"][f"perf_{i}"] = {"result": res, "note": note, "mutates_inputs": mutated}
            print(f"{name} perf_{i}: {res}{' (mutates its inputs)' if mutated else ''} {note}", flush=True)
            if res == "fault" and "CUDA" in note:
                break   # the context is likely dead: the module's other cases cannot be told apart
        rec["elapsed_s"] = round(time.monotonic() - t0, 1)
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        del sweep
        try:
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            print(f"{name}: the CUDA context is dead; the modules after it need a process of their own", flush=True)
            break


if __name__ == "__main__":
    main()
