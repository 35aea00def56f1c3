"""Compile one kernel of a module for a GPU target without a GPU (Triton's front end and its MLIR passes
run on the CPU), and check what reached the IR: what the interpreter cannot see (a kwarg that must be a
compile-time constant, a constexpr folded away) is caught here.

usage: compile_check.py MODULE KERNEL --sig x_ptr=*fp32,n=i32 --const BLOCK=1024,FLAG=1
                        [--target cuda:90] [--expect TEXT]... [--absent TEXT]...
       compile_check.py --records LAUNCHES.jsonl [--target cuda:90]
Exit 0 when the kernel compiles to TTIR with every --expect text and no --absent text; 1 otherwise; 77
(skip) without triton. --records: every distinct launch interp_check.py recorded (module, kernel, argument
types, constexprs, launch options) is compiled; exit 1 when any fails.
"""
import argparse
import functools
import importlib.util
import os
import sys


def parse_pairs(text):
    out = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        out[name.strip()] = value.strip()
    return out


@functools.lru_cache(maxsize=None)
def load_module(path):
    """The module at `path`, loaded once per process (a records file names each module many times)."""
    spec = importlib.util.spec_from_file_location("kiln_compile_check_" + os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def jit_function(mod, name):
    import triton
    fn = getattr(mod, name, None)
    for _ in range(8):  # under @triton.autotune / @triton.heuristics
        if fn is None or isinstance(fn, triton.runtime.jit.JITFunction):
            break
        fn = getattr(fn, "fn", None)
    return fn if isinstance(fn, triton.runtime.jit.JITFunction) else None


def compile_kernel(fn, sig, consts, target, options=None):
    """-> Triton's compiled kernel (asm["ttir"] ...) for `target` ("cuda:90"), compiled on the CPU."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    sig = dict(sig)
    for name in consts:
        sig[name] = "constexpr"
    backend, _, arch = target.partition(":")
    warp = 64 if backend == "hip" else 32
    return triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts),
                          target=GPUTarget(backend, int(arch) if arch.isdigit() else arch, warp),
                          options=options or {})


def check_records(path, target):
    import json
    seen, failures, compiled, skipped = set(), 0, 0, 0
    for line in open(path) if os.path.exists(path) else []:
        r = json.loads(line)
        key = json.dumps(r, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        label = f"{os.path.basename(r['module'])} {r['kernel']} {r['const']} {r['options']}"
        try:
            fn = jit_function(load_module(r["module"]), r["kernel"])
        except Exception as e:  # noqa: BLE001 - reported
            print(f"FAIL {label}: the module does not load without the interpreter: {e!r}")
            failures += 1
            continue
        if fn is None:
            print(f"skip {label}: not a module-level jit function")
            skipped += 1
            continue
        try:
            compile_kernel(fn, r["sig"], r["const"], target, r["options"])
            compiled += 1
        except Exception as e:  # noqa: BLE001 - reported
            lines = str(e).strip().splitlines()
            errors = [x for x in lines if "error" in x.lower() and "ptxas stderr" not in x.lower()]
            print(f"FAIL {label}: {(errors or lines or [repr(e)])[0 if errors else -1].strip()}")
            failures += 1
    print(f"{compiled} kernels compiled for {target}, {failures} failures, {skipped} skipped")
    return 1 if failures else 0


def main():
    if "--records" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--records", required=True)
        ap.add_argument("--target", default="cuda:90")
        a = ap.parse_args()
        try:
            import triton  # noqa: F401
        except ImportError as e:
            print(f"skip: triton not importable ({e})")
            return 77
        return check_records(a.records, a.target)
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("kernel")
    ap.add_argument("--sig", default="", help="name=type of each runtime argument (triton signature types)")
    ap.add_argument("--const", default="", help="name=int of each constexpr")
    ap.add_argument("--target", default="cuda:90")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--absent", action="append", default=[])
    a = ap.parse_args()
    try:
        import triton  # noqa: F401
    except ImportError as e:
        print(f"skip: triton not importable ({e})")
        return 77
    fn = jit_function(load_module(a.module), a.kernel)
    if fn is None:
        print(f"FAIL {a.kernel}: not a jit function of {a.module}")
        return 1
    consts = {k: int(v) for k, v in parse_pairs(a.const).items()}
    ttir = compile_kernel(fn, parse_pairs(a.sig), consts, a.target).asm["ttir"]
    bad = [f"missing: {t}" for t in a.expect if t not in ttir] + [f"present: {t}" for t in a.absent if t in ttir]
    for b in bad:
        print(f"FAIL {a.kernel} {a.const}: {b}")
    if bad:
        print(ttir)
        return 1
    print(f"ok   {a.kernel} {a.const} ({a.target})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
