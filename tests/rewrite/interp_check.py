#!/usr/bin/env python3
"""Semantics check for kiln rewrites under Triton's interpreter (CPU tensors, small sizes).

For every manifest line of kind `ok+interp`, the original case module and its rewritten form (from
kiln_rewrite_apply) are imported with TRITON_INTERPRET=1; each module's kiln_check() returns a
tensor or a tuple of tensors, and the outputs must match (allclose, fp32 1e-4 / fp16 1e-2).
Exit 77 when torch or triton is missing (CTest skip), 1 on any mismatch or failure.
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from forked import run_forked  # noqa: E402  (tests/forked.py)

try:
    import torch  # noqa: F401
    import triton  # noqa: F401
except Exception as e:  # pragma: no cover
    print(f"skip: torch/triton not importable with {sys.executable}: {e}")
    sys.exit(77)


def _patch_interpreter():
    """Two interpreter gaps that are not about the rewrites (Triton 3.6, numpy 2.x, no GPU).

    - Scalar arguments are 1-element arrays; numpy 2 refuses int() of them, so loops with run-time
      bounds (`for off in range(0, N, BLOCK)`) fail. Index with the single element instead.
    - @triton.autotune benchmarks through the GPU driver; on the CPU time one call instead.
    """
    import numpy as np
    import triton.runtime.interpreter as ti
    import triton.runtime.autotuner as ta

    orig = ti._patch_lang_tensor

    def patched(tensor, scope):
        orig(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))

    ti._patch_lang_tensor = patched

    def cpu_bench(kernel_call, quantiles=None, **_):
        import time
        t = time.perf_counter()
        kernel_call()
        d = (time.perf_counter() - t) * 1e3
        return [d] * len(quantiles) if quantiles else d

    ta.Autotuner.do_bench = property(lambda self: cpu_bench)


_patch_interpreter()

_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _type_of(v):
    """Triton's signature type of a run-time argument, or None when it is not one compile_check knows."""
    if isinstance(v, torch.Tensor):
        names = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
                 torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8",
                 torch.bool: "i1"}
        t = names.get(v.dtype)
        return "*" + t if t else None
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        return "i32" if -2**31 <= v < 2**31 else "i64"
    if isinstance(v, float):
        return "fp32"
    return None


def record_launches(path, module_file):
    """Appends one JSON line per kernel launch the interpreter runs (kernel name, the types of its run-time
    arguments, its constexprs and launch options) to `path`, for compile_check.py --records: the same
    kernels compiled for a GPU target, which the interpreter never does."""
    import inspect
    import json
    import triton.runtime.interpreter as ti

    orig = ti.InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        try:
            opts = {k: kwargs[k] for k in _OPTIONS if kwargs.get(k) is not None}
            sig = inspect.signature(self.fn)
            b = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in sig.parameters})
            b.apply_defaults()
            types, consts, ok = {}, {}, True
            for name, prm in sig.parameters.items():
                v = b.arguments.get(name)
                if "constexpr" in str(prm.annotation):
                    if v is not None and not isinstance(v, (int, float, bool, str)):
                        ok = False
                    consts[name] = v
                else:
                    t = _type_of(v)
                    if t is None:
                        ok = False
                    types[name] = t
            if ok:
                with open(path, "a") as f:
                    f.write(json.dumps({"module": module_file, "kernel": self.fn.__name__, "sig": types,
                                        "const": consts, "options": opts}) + "\n")
        except Exception:  # noqa: BLE001 - recording never changes what runs
            pass
        return orig(self, *args, grid=grid, warmup=warmup, **kwargs)

    ti.InterpretedFunction.run = run


def parse_manifest(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 5:
                raise SystemExit(f"{path}:{n}: expected 5 fields")
            rows.append((n, *parts))
    return rows


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_list(x):
    if isinstance(x, (tuple, list)):
        return list(x)
    return [x]


def compare(a, b):
    a, b = as_list(a), as_list(b)
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"output {i}: {x.shape}/{x.dtype} vs {y.shape}/{y.dtype}"
        tol = 1e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-4
        if not torch.allclose(x.float(), y.float(), atol=tol, rtol=tol, equal_nan=True):
            err = (x.float() - y.float()).abs().max().item()
            return f"output {i}: max abs error {err}"
    return None


def compare_pair(src, out, records=None):
    """In the child: exit 0 when both modules' kiln_check() outputs match, else 1 with the reason printed.
    `records`: the rewritten module's launches are recorded there (record_launches)."""
    orig = load(src, "orig").kiln_check()
    if records:
        record_launches(records, out)
    why = compare(orig, load(out, "rew").kiln_check())
    if why:
        print(why)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool")
    ap.add_argument("--manifest")
    ap.add_argument("--root")
    ap.add_argument("--only", default="")
    ap.add_argument("--compile", default="", metavar="TARGET",
                    help="also compile every kernel launch of each rewritten module for TARGET (cuda:90), "
                         "without a GPU (compile_check.py --records)")
    args = ap.parse_args()
    failures = 0
    ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, kind, file, kernel, request, _ in parse_manifest(args.manifest):
            if kind != "ok+interp" or args.only not in file + request:
                continue
            src = os.path.join(args.root, file)
            reqs = [r.strip() for r in request.split(";;")]
            p = subprocess.run([args.tool, src, kernel, *reqs], capture_output=True, text=True)
            label = f"{file} {kernel} [{request}]"
            if p.returncode != 0:
                print(f"FAIL {label}: rewrite failed: {p.stderr.strip()}")
                failures += 1
                continue
            out = os.path.join(tmp, f"case{n}.py")
            with open(out, "w") as f:
                f.write(p.stdout)
            # A child per pair, forked after torch and triton were imported: a rewrite that breaks memory
            # safety can crash the interpreter.
            records = os.path.join(tmp, "launches.jsonl") if args.compile else None
            rc, msg = run_forked(lambda: compare_pair(src, out, records))
            ran += 1
            if rc != 0:
                print(f"FAIL {label}: exit {rc}: {msg.splitlines()[-1] if msg else ''}")
                failures += 1
            else:
                print(f"ok   {label}")
        print(f"{ran} compared, {failures} failures")
        if args.compile and ran:
            # Without the interpreter: @triton.jit makes real JIT functions, compiled for the target.
            env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
            here = os.path.dirname(os.path.abspath(__file__))
            p = subprocess.run([sys.executable, os.path.join(here, "compile_check.py"), "--records",
                                os.path.join(tmp, "launches.jsonl"), "--target", args.compile], env=env)
            if p.returncode != 0:
                failures += 1
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
