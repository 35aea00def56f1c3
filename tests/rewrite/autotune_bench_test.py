"""The benchmark kiln's @triton.autotune uses (`do_bench=_kiln_autotune_bench`, src/rewrite/rewrite.cc).

The module kiln_rewrite_apply writes for an insert_autotune request is loaded and its helper is called with
torch's and triton's timing functions replaced by fakes on a fake GPU clock, so each branch is checked
without a GPU: a call under 50 us of GPU time is timed mostly warm (10 calls back to back after fills of a
256 MB buffer, 20 samples; no CUDA graph, stream or spin kernel of its own), a longer one by Triton's
default benchmark; under the interpreter nothing is timed and the first config runs.
The module then runs for real under the interpreter: the autotuner calls the helper and picks a config.

usage: autotune_bench_test.py KILN_REWRITE_APPLY CASE_FILE KERNEL
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import triton
    import triton.testing
except ImportError:
    sys.exit(77)

tool, case, kernel = sys.argv[1:4]
request = "insert_autotune configs=BLOCK_SIZE:128,num_warps:4;BLOCK_SIZE:256,num_warps:8"
src = subprocess.run([tool, case, kernel, request], check=True, capture_output=True, text=True).stdout
assert "do_bench=_kiln_autotune_bench" in src, src
assert src.count("def _kiln_autotune_bench(") == 1, src

tmp = tempfile.mkdtemp()


def load(text, name):
    """The module kiln_rewrite_apply wrote, imported from a file (Triton reads the kernel's source there)."""
    path = os.path.join(tmp, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


mod = load(src, "autotuned")
bench = mod._kiln_autotune_bench

calls = []
failures = []


def check(name, got, want):
    if got != want:
        failures.append(f"{name}: got {got!r}, want {want!r}")


class Default:
    def __call__(self, fn, quantiles=None):
        calls.append(("default", quantiles))
        return [1.0, 0.9, 1.1]


class FakeDriver:
    def get_benchmarker(self):
        return Default()


clock = [0.0]   # fake GPU time, ms: each call of the timed function adds its duration


class FakeEvent:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = clock[0]

    def elapsed_time(self, end):
        return end.t - self.t


def timed(ms):
    def fn():
        calls.append("call")
        clock[0] += ms
    return fn


def summary():
    return {x if isinstance(x, str) else x[0]: sum(1 for y in calls if y == x) for x in calls}


saved = (torch.cuda.is_available, torch.cuda.Event, torch.cuda.synchronize, torch.cuda._sleep,
         triton.runtime.driver._active, os.environ.get("TRITON_INTERPRET"))
graph_api = (torch.cuda.graph, torch.cuda.CUDAGraph, torch.cuda.Stream)
real_empty = torch.empty
q = (0.5, 0.2, 0.8)
try:
    triton.runtime.driver.set_active(FakeDriver())
    os.environ.pop("TRITON_INTERPRET", None)
    torch.cuda.is_available = lambda: True
    torch.cuda.Event = FakeEvent
    torch.cuda.synchronize = lambda *a, **k: None
    # only what Triton's default benchmark uses: a buffer's fills, the config's own calls, CUDA events. No
    # CUDA graph, no stream of its own, no spin kernel (policy strict rejects a candidate that uses them).
    torch.cuda.graph = torch.cuda.CUDAGraph = torch.cuda.Stream = torch.cuda._sleep = None

    class Busy:
        def zero_(self):
            calls.append(("fill",))
            clock[0] += 0.08

    def fake_empty(*a, **k):
        check("busy buffer", (a, k.get("device"), k.get("dtype")), ((64 * 1024 * 1024,), "cuda", torch.int32))
        return Busy()
    torch.empty = fake_empty

    calls.clear()                                            # a 9 us call: 10 warm calls per sample
    got = bench(timed(0.009), q)
    check("short call result", [round(x, 9) for x in got], [0.009, 0.009, 0.009])
    check("short call timing", (calls.count("call"), sum(1 for c in calls if c[0] == "fill"),
                                sum(1 for c in calls if c[0] == "default")), (202, 252, 0))
    calls.clear()
    check("short call, no quantiles", round(bench(timed(0.009), None), 9), 0.009)

    calls.clear()                                            # 200 us: Triton's default (cold L2)
    check("long call result", bench(timed(0.2), q), [1.0, 0.9, 1.1])
    check("long call timing", (calls.count("call"), calls[-1]), (2, ("default", q)))  # no warm samples first

    os.environ["TRITON_INTERPRET"] = "1"                     # the interpreter: nothing timed, first config
    calls.clear()
    check("interpreter timing", (bench(timed(0.009), q), bench(timed(0.009), None), calls), ([0.0, 0.0, 0.0], 0.0, []))

    os.environ.pop("TRITON_INTERPRET", None)
    torch.cuda.is_available = lambda: False                  # no GPU
    calls.clear()
    bench(timed(0.009), q)
    check("no-GPU timing", calls, [("default", q)])
finally:
    (torch.cuda.is_available, torch.cuda.Event, torch.cuda.synchronize, torch.cuda._sleep,
     triton.runtime.driver._active) = saved[:5]
    torch.empty = real_empty
    torch.cuda.graph, torch.cuda.CUDAGraph, torch.cuda.Stream = graph_api
    if saved[5] is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = saved[5]

# For real, under the interpreter (where Triton's own benchmark raises: no driver): the autotuner times
# both configs through the helper, keeps the first, and the module computes the right result.
if os.environ.get("TRITON_INTERPRET") == "1":
    seen = []
    real = mod._kiln_autotune_bench

    def spy(fn, quantiles):
        seen.append(quantiles)
        return real(fn, quantiles)

    at = getattr(mod, kernel)
    at._do_bench = spy
    at.__dict__.pop("do_bench", None)   # cached_property: read _do_bench again
    x = torch.rand(3000)
    y = torch.rand(3000)
    out = mod.add(x, y)
    check("autotuned result", torch.equal(out, x + y), True)
    check("helper called per config", len(seen), 2)
    check("first config kept", at.best_config.kwargs, {"BLOCK_SIZE": 128})

# Pinned shapes (InsertAutotune::pins): a shape kiln measured runs the config measured faster there without
# the autotuner timing the others (here n=3000 pinned to the original's, the second config: the helper
# times it alone); any other shape is tuned over both configs as before.
if os.environ.get("TRITON_INTERPRET") == "1":
    pinned = subprocess.run([tool, case, kernel, request + " pin_key=n_elements pins=3000:rest"], check=True,
                            capture_output=True, text=True).stdout
    check("pins rendered", "_kiln_pinned((\"n_elements\",), {(3000,): False})" in pinned, True)
    pmod = load(pinned, "pinned")
    at = getattr(pmod, kernel)
    seen = []
    real = pmod._kiln_autotune_bench
    at._do_bench = lambda fn, quantiles: (seen.append(quantiles), real(fn, quantiles))[1]
    at.__dict__.pop("do_bench", None)
    for n, want_block, want_timed in ((3000, 256, 1), (2000, 128, 2)):
        seen.clear()
        x, y = torch.rand(n), torch.rand(n)
        check(f"pinned result n={n}", torch.equal(pmod.add(x, y), x + y), True)
        check(f"pinned config n={n}", at.best_config.kwargs, {"BLOCK_SIZE": want_block})
        check(f"configs timed n={n}", len(seen), want_timed)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("autotune bench helper: ok")
