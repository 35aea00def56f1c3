"""Compile one kernel of a module for a GPU target without a GPU (Triton's front end and its MLIR passes
run on the CPU), and check what reached the IR: what the interpreter cannot see (a kwarg that must be a
compile-time constant, a constexpr folded away) is caught here.

usage: compile_check.py MODULE KERNEL --sig x_ptr=*fp32,n=i32 --const BLOCK=1024,FLAG=1
                        [--target cuda:90] [--expect TEXT]... [--absent TEXT]...
Exit 0 when the kernel compiles to TTIR with every --expect text and no --absent text; 1 otherwise; 77
(skip) without triton.
"""
import argparse
import importlib.util
import sys


def parse_pairs(text):
    out = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        out[name.strip()] = value.strip()
    return out


def main():
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
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError as e:
        print(f"skip: triton not importable ({e})")
        return 77
    spec = importlib.util.spec_from_file_location("kiln_compile_check_module", a.module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, a.kernel)
    while not isinstance(fn, triton.runtime.jit.JITFunction):  # under @triton.autotune / heuristics
        fn = fn.fn
    consts = {k: int(v) for k, v in parse_pairs(a.const).items()}
    sig = dict(parse_pairs(a.sig))
    for name in consts:
        sig[name] = "constexpr"
    backend, _, arch = a.target.partition(":")
    warp = 64 if backend == "hip" else 32
    compiled = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts),
                              target=GPUTarget(backend, int(arch) if arch.isdigit() else arch, warp))
    ttir = compiled.asm["ttir"]
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
