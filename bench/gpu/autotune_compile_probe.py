#!/usr/bin/env python3
"""How long each autotune config of a TritonBench-G module's kernels takes to COMPILE, outside kiln (no worker,
no kiln binary): a plain Triton compile per (kernel, config), each in a fresh process with an empty Triton cache
and a bounded time, so that one slow config shows as slow on its own.

    autotune_compile_probe.py FILE [--limit S] [--jobs N] [--target cuda:CC] [--json OUT]

FILE is a TritonBench-G file (the module, a line of 146 '#', its test). The module and its test run once with
every kernel launch captured instead of launched (the arguments of each kernel's first launch: Autotuner.run and
JITFunction.run replaced, nothing reaches the GPU; without CUDA, device="cuda" tensors are made on the CPU).
Then each config of each autotuned kernel (plain @triton.jit kernels: their one launch) is compiled from those
arguments with `triton.compile` for the GPU's target (or --target without a GPU: ptxas and LLVM run on the CPU,
so compile time does not need the GPU), --jobs at a time, each cut at --limit seconds; a cut one names the
processes it was running then (`ptxas`: the time is in NVIDIA's assembler, not in Triton's passes) and how
long its compile had run (the limit also covers the process's start: importing torch, running the test).
Prints one line per compile and a table last; --json writes the rows.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SEP = "#" * 146


def load_captured(path):
    """Runs FILE's module and test with launches captured: {kernel name: (jit function, wrappers, configs,
    args, kwargs)} of each kernel's first launch (wrappers: the Heuristics between the Autotuner and the jit)."""
    import torch
    import triton
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    calls = {}

    def unwrap(k):
        wrappers = []
        while not isinstance(k, JITFunction):
            wrappers.append(k)
            k = k.fn
        return k, wrappers

    def capture_autotuner(self, *args, **kwargs):
        jit, wrappers = unwrap(self.fn)
        calls.setdefault(jit.fn.__name__, (jit, wrappers, list(self.configs), args, kwargs))

    def capture_heuristics(self, *args, **kwargs):
        jit, wrappers = unwrap(self)
        calls.setdefault(jit.fn.__name__, (jit, wrappers, [None], args, kwargs))

    def capture_jit(self, *args, **kwargs):
        calls.setdefault(self.fn.__name__, (self, [], [None], args, kwargs))

    Autotuner.run, Heuristics.run, JITFunction.run = capture_autotuner, capture_heuristics, capture_jit
    text = open(path).read()
    top, _, test = text.partition(SEP)
    g = {"__name__": "__main__", "__file__": path}
    with cpu_for_cuda():
        exec(compile(top, path, "exec"), g)
        try:
            exec(compile(test, path, "exec"), g)
        except Exception as e:  # launches return nothing: a test reading their outputs may fail after them
            print(f"(the test stopped after the captured launches: {type(e).__name__}: {str(e)[:120]})",
                  file=sys.stderr)
    return calls


def cpu_for_cuda():
    """Without CUDA: device="cuda" means the CPU while the module and its test run (their tensors only feed
    the kernels' signatures: dtypes and 16-byte alignment). With CUDA: nothing."""
    import contextlib
    import torch
    if torch.cuda.is_available():
        return contextlib.nullcontext()
    from torch.overrides import TorchFunctionMode

    class CpuForCuda(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            d = kwargs.get("device")
            if d is not None and "cuda" in str(d):
                kwargs["device"] = "cpu"
            name = getattr(func, "__name__", "")
            if name == "cuda":  # tensor.cuda(): stays on the CPU
                return args[0]
            if name == "to":  # tensor.to("cuda", ...): the other conversions only
                kwargs.pop("device", None)
                args = [a for a in args if not (isinstance(a, (str, torch.device)) and "cuda" in str(a))]
            return func(*args, **kwargs)
    return CpuForCuda()


def describe(cfg):
    if cfg is None:
        return "its launch"
    parts = [f"{k}={v}" for k, v in cfg.kwargs.items()]
    parts += [f"num_warps={cfg.num_warps}", f"num_stages={cfg.num_stages}"]
    return ", ".join(parts)


def target_of(spec):
    from triton.backends.compiler import GPUTarget
    if spec:
        backend, _, cc = spec.partition(":")
        return GPUTarget(backend, int(cc), 32)
    from triton.runtime import driver
    return driver.active.get_current_target()


def compile_one(path, kernel, index, target_spec):
    """The child: compiles config `index` of `kernel` from its captured launch; prints a JSON line."""
    from triton import knobs
    from triton.compiler import ASTSource, compile as triton_compile, make_backend
    from triton.runtime.jit import create_function_from_signature
    jit, wrappers, configs, args, kwargs = load_captured(path)[kernel]
    cfg = configs[index]
    kwargs = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    if cfg is not None:
        kwargs.update(cfg.all_kwargs())
    arg_names = [p.name for p in jit.params]
    for w in wrappers:  # a Heuristics under the Autotuner adds its values as it would at launch
        for name, heur in getattr(w, "values", {}).items():
            kwargs[name] = heur({**dict(zip(arg_names, args)), **kwargs})
    kwargs["debug"] = kwargs.get("debug", jit.debug) or knobs.runtime.debug
    kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    target = target_of(target_spec)
    backend = make_backend(target)
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    bound, spec, opts = binder(*args, **kwargs)
    options, signature, constexprs, attrs = jit._pack_args(backend, kwargs, bound, spec, opts)
    t = time.monotonic()
    print(json.dumps({"compile_start": t}), flush=True)  # (the parent's clock too: CLOCK_MONOTONIC)
    ck = triton_compile(ASTSource(jit, signature, constexprs, attrs), target=target, options=options.__dict__)
    row = {"compile_s": round(time.monotonic() - t, 2), "ptx_lines": ck.asm.get("ptx", "").count("\n")}
    if not target_spec:
        try:
            ck._init_handles()  # loads the binary on the GPU: its registers and spills
            row.update(n_regs=ck.n_regs, n_spills=ck.n_spills)
        except Exception as e:
            row["load_error"] = str(e)[:200]
    print(json.dumps(row), flush=True)


def descendants(pid):
    """Names of the processes below `pid` (from /proc), e.g. ['ptxas']."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
                name, ppid = s[s.index("(") + 1:s.rindex(")")], int(s[s.rindex(")") + 2:].split()[1])
                kids.setdefault(ppid, []).append((int(d), name))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        for child, name in kids.get(todo.pop(), []):
            out.append(name)
            todo.append(child)
    return out


def run_all(path, jobs, limit, target_spec):
    calls = load_captured(path)
    todo = [(k, i, describe(c)) for k, (_, _, configs, _, _) in calls.items() for i, c in enumerate(configs)]
    print(f"{len(calls)} kernel(s), {len(todo)} compile(s), {jobs} at a time, {limit:g} s each", flush=True)
    rows, running = [], []
    while todo or running:
        while todo and len(running) < jobs:
            k, i, desc = todo.pop(0)
            env = dict(os.environ, TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="probe_cache_"))
            cmd = [sys.executable, os.path.abspath(__file__), path, "--one", k, str(i)]
            if target_spec:
                cmd += ["--target", target_spec]
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                 start_new_session=True)
            running.append((p, time.monotonic(), {"kernel": k, "config": i, "desc": desc}))
        time.sleep(0.2)
        for item in list(running):
            p, t0, row = item
            elapsed = time.monotonic() - t0
            if p.poll() is None and elapsed < limit:
                continue
            running.remove(item)
            if p.poll() is None:  # cut at the limit: what was it doing, since when?
                row.update(cut_s=round(elapsed, 1), running=sorted(set(descendants(p.pid))))
                now = time.monotonic()
                os.killpg(p.pid, 9)
                out, _ = p.communicate()
                starts = [json.loads(l)["compile_start"] for l in out.splitlines() if "compile_start" in l]
                row["compiling_s"] = round(now - starts[-1], 1) if starts else None
            else:
                out, err = p.communicate()
                lines = [l for l in out.splitlines() if l.startswith("{")]
                if p.returncode == 0 and lines:
                    row.update(json.loads(lines[-1]))
                else:
                    row["error"] = (err.strip().splitlines() or [f"exit {p.returncode}"])[-1][:200]
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def table(rows, limit):
    print("| kernel | config | compile | regs | spills |")
    print("|---|---|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: (r["kernel"], r["config"])):
        if "cut_s" in r and r.get("compiling_s") is None:
            t = f"not reached (cut at {r['cut_s']:g} s before its compile began)"
        elif "cut_s" in r:
            t = f"> {r['compiling_s']:g} s (cut; running: {', '.join(r['running']) or 'in-process passes'})"
        elif "error" in r:
            t = "error: " + r["error"]
        else:
            t = f"{r['compile_s']:g} s"
        print(f"| {r['kernel']} | {r['desc']} | {t} | {r.get('n_regs', '')} | {r.get('n_spills', '')} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per compile (default 120)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--target", default="", help="compile for this target (e.g. cuda:90) without a GPU")
    ap.add_argument("--json", default="", help="write the rows to this file")
    ap.add_argument("--one", nargs=2, metavar=("KERNEL", "INDEX"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        compile_one(a.file, a.one[0], int(a.one[1]), a.target)
        return 0
    if SEP not in open(a.file).read():
        print(f"{a.file}: error: no line of 146 '#' (not a TritonBench-G file)", file=sys.stderr)
        return 2
    rows = run_all(a.file, a.jobs, a.limit, a.target)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    table(rows, a.limit)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
