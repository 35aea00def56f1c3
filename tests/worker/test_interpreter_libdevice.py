"""libdevice under Triton's interpreter (the worker's emulation, kiln_worker.platform): the three ways
kernels reach it (`tl.extra.cuda.libdevice.pow`, the backend-neutral `triton.language.extra.libdevice`
that torch inductor's helpers import, a function bound to a global), numerically against torch, and a
function that is not emulated fails naming its symbol. Runs in a child process: the interpreter must be
selected before triton is imported."""
import os
import subprocess
import sys

WORKER = os.path.join(os.path.dirname(__file__), "..", "..", "worker")

CHILD = r'''
import sys
sys.path.insert(0, sys.argv[1])
from kiln_worker import platform as P
P.select_mode(True)
P.install_launch_instrumentation()
P.install_interpreter_shims()
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda.libdevice import isfinited as _isfinited

_tanh = libdevice.tanh


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.extra.cuda.libdevice.pow(x, 2.0), mask=m)
    tl.store(out_ptr + n + offs, libdevice.erf(x), mask=m)
    tl.store(out_ptr + 2 * n + offs, _tanh(x), mask=m)
    tl.store(out_ptr + 3 * n + offs, tl.extra.cuda.libdevice.llrint(x * 3.0).to(tl.float32), mask=m)
    tl.store(out_ptr + 4 * n + offs, _isfinited(x.to(tl.float64) / (x - x)).to(tl.float32), mask=m)


@triton.jit
def bad(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.extra.cuda.libdevice.j0(tl.load(x_ptr + offs)))


x = torch.linspace(-2.0, 2.0, 50)
out = torch.empty(5 * 50)
k[(1,)](x, out, 50, BLOCK=64)
want = torch.cat([x ** 2, torch.erf(x), torch.tanh(x), torch.round(x * 3.0), torch.isfinite(x / (x - x)).float()])
assert torch.allclose(out, want, atol=1e-6, rtol=1e-5), (out - want).abs().max()
try:
    bad[(1,)](x, BLOCK=32)
    raise SystemExit("j0 ran")
except Exception as e:
    assert "__nv_j0" in str(e) and "not emulated" in str(e), e
print("libdevice ok")
'''


def test_libdevice_is_emulated_under_the_interpreter():
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", CHILD, WORKER], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0 and "libdevice ok" in p.stdout, (p.stdout[-2000:], p.stderr[-3000:])
