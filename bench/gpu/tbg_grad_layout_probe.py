#!/usr/bin/env python3
"""What layout do the gradients a TritonBench-G module's autograd.Function.backward receives have? A plain
check, outside kiln (torch, triton and the corpus only).

    python3 bench/gpu/tbg_grad_layout_probe.py [--corpus DIR] [--contiguous] [--runs N] NAME

Runs the module's file as written (the module, then its own test below TritonBench's separator) with the
`backward` of every torch.autograd.Function subclass in the module wrapped: each call prints the shape,
strides and storage bytes of each gradient it receives, and `expanded` where the storage holds fewer bytes
than a contiguous tensor of that shape spans (a stride-0 gradient, e.g. from `out.sum().backward()`: a kernel
that indexes it with another tensor's strides reads past it). --contiguous passes `.contiguous()` copies
instead (the control: the same test with gradients the kernel can index). --runs N runs the test N times in
the process and says whether its results (the test's returned dict) are the same each time. --no-launch
replaces every kernel launch with nothing (outputs stay unwritten): the layouts without running a kernel.
Without CUDA, device="cuda" means the CPU and Triton's interpreter runs the kernels (for testing on a CPU;
parallel_attention's kernels do not run under the interpreter: use --no-launch there).
"""
import argparse
import os
import sys

import torch

SEP = "#" * 146


def describe(i, g):
    if not isinstance(g, torch.Tensor):
        return f"grad[{i}]: {g!r}"
    span = g.numel() * g.element_size()
    have = g.untyped_storage().nbytes()
    tag = " expanded" if have < span else ""
    return (f"grad[{i}]: shape {tuple(g.shape)} stride {tuple(g.stride())} {g.dtype} contiguous "
            f"{g.is_contiguous()}, storage {have} B of {span} B spanned{tag}")


def wrap_backwards(g, contiguous, log):
    for obj in list(g.values()):
        if isinstance(obj, type) and issubclass(obj, torch.autograd.Function) and "backward" in obj.__dict__:
            orig = obj.__dict__["backward"].__func__

            def backward(ctx, *grads, _orig=orig, _name=obj.__name__):
                log.append(f"{_name}.backward call {sum(l.endswith(':') for l in log) + 1}:")
                log.extend("  " + describe(i, x) for i, x in enumerate(grads))
                if contiguous:
                    grads = tuple(x.contiguous() if isinstance(x, torch.Tensor) else x for x in grads)
                return _orig(ctx, *grads)
            obj.backward = staticmethod(backward)


def cpu_for_cuda():
    import contextlib
    if torch.cuda.is_available():
        return contextlib.nullcontext()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from autotune_compile_probe import cpu_for_cuda as mode
    return mode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("KILN_CORPUS_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "corpus"))
    ap.add_argument("--contiguous", action="store_true")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--no-launch", action="store_true")
    ap.add_argument("name")
    a = ap.parse_args()
    if not torch.cuda.is_available() and not a.no_launch:
        os.environ["TRITON_INTERPRET"] = "1"
    if a.no_launch:
        from triton.runtime.jit import JITFunction
        JITFunction.run = lambda self, *args, **kwargs: None
    path = os.path.join(a.corpus, "tritonbench", "G", "kernels", a.name + ".py")
    top, sep, test = open(path).read().partition(SEP)
    if not sep:
        sys.exit(f"{path}: error: no TritonBench separator line")
    g = {"__name__": "__main__", "__file__": path}
    log = []
    results = []
    with cpu_for_cuda():
        exec(compile(top, path, "exec"), g)
        wrap_backwards(g, a.contiguous, log)
        for r in range(a.runs):
            torch.manual_seed(0)
            exec(compile(test, path, "exec"), g)
            results.append(repr(g.get("result_gold")))
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            how = " (contiguous grads)" if a.contiguous else ""
            print(f"{a.name} run {r + 1}: {'no kernel launched' if a.no_launch else 'clean'}{how}", flush=True)
    print("\n".join(log))
    if a.runs > 1:
        same = all(x == results[0] for x in results)
        print(f"{a.name}: results of the {a.runs} runs {'the same' if same else 'DIFFER'}")
        if not same:
            print("\n".join(f"  run {i + 1}: {x[:600]}" for i, x in enumerate(results)))


if __name__ == "__main__":
    main()
