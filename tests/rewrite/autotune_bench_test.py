"""The benchmark kiln's @triton.autotune uses (`do_bench=_kiln_autotune_bench`, src/rewrite/rewrite.cc).

The module kiln_rewrite_apply writes for an insert_autotune request is loaded and its helper is called with
torch's and triton's timing functions replaced by recorders, so each branch is checked without a GPU:
a call under 50 us of GPU time is timed by CUDA-graph replay (as kiln's own timer does), a longer one and
one that cannot be captured by Triton's default benchmark, and so is everything under the interpreter.
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
path = os.path.join(tmp, "autotuned.py")
with open(path, "w") as f:
    f.write(src)
spec = importlib.util.spec_from_file_location("autotuned", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
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


def graph_bench(ms, raises=False):
    def f(fn, rep=20, quantiles=None, return_mode="mean"):
        calls.append(("graph", rep, quantiles, return_mode))
        if raises:
            raise RuntimeError("operation not permitted when stream is capturing")
        return ms if quantiles is None else [ms, ms, ms]
    return f


class FakeDriver:
    def get_benchmarker(self):
        return Default()


saved = (torch.cuda.is_available, triton.testing.do_bench_cudagraph, triton.runtime.driver._active,
         os.environ.get("TRITON_INTERPRET"))
q = (0.5, 0.2, 0.8)
try:
    triton.runtime.driver.set_active(FakeDriver())
    os.environ.pop("TRITON_INTERPRET", None)
    torch.cuda.is_available = lambda: True

    triton.testing.do_bench_cudagraph = graph_bench(0.009)   # a 9 us call: graph replay decides
    calls.clear()
    check("short call result", bench(lambda: None, q), [0.009, 0.009, 0.009])
    check("short call timing", calls, [("graph", 5, None, "median"), ("graph", 20, q, "median")])

    triton.testing.do_bench_cudagraph = graph_bench(0.2)     # 200 us: Triton's default (cold L2)
    calls.clear()
    check("long call result", bench(lambda: None, q), [1.0, 0.9, 1.1])
    check("long call timing", calls, [("graph", 5, None, "median"), ("default", q)])

    triton.testing.do_bench_cudagraph = graph_bench(0.009, raises=True)   # cannot be captured
    calls.clear()
    check("uncapturable result", bench(lambda: None, q), [1.0, 0.9, 1.1])
    check("uncapturable timing", calls, [("graph", 5, None, "median"), ("default", q)])

    os.environ["TRITON_INTERPRET"] = "1"                     # the interpreter: nothing timed, first config
    triton.testing.do_bench_cudagraph = graph_bench(0.009)
    calls.clear()
    check("interpreter timing", (bench(lambda: None, q), bench(lambda: None, None), calls), ([0.0, 0.0, 0.0], 0.0, []))

    os.environ.pop("TRITON_INTERPRET", None)
    torch.cuda.is_available = lambda: False                  # no GPU
    calls.clear()
    bench(lambda: None, q)
    check("no-GPU timing", calls, [("default", q)])
finally:
    torch.cuda.is_available, triton.testing.do_bench_cudagraph, triton.runtime.driver._active = saved[:3]
    if saved[3] is None:
        os.environ.pop("TRITON_INTERPRET", None)
    else:
        os.environ["TRITON_INTERPRET"] = saved[3]

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

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("autotune bench helper: ok")
