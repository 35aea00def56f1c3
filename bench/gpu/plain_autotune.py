"""Session 22 (issue 21): Triton's autotuner outside kiln, in a plain process. For MODULE (a TritonBench-G
module file) and its entry's calls at the given sizes: the config its autotuner picks per key, the time
it measured for that pick and the fastest time it measured, and the picked call's time by Triton's
do_bench afterwards. Run it in several processes: do the picks agree, and with kiln's worker's picks?
  python3 plain_autotune.py bmm_optimized.py bmm 960,992,1024
  python3 plain_autotune.py int8_matmul_quantization.py int8 3712,3840,3968
MODE (4th argument): plain (default); kiln: the first call at each size inside the contexts kiln's worker
checks a candidate in (launch instrumentation, CUDA kernel trace, op recorder, stream watch; the worker
directory on PYTHONPATH); hostdelay:US: every launch spins US microseconds on the host first."""
import importlib.util
import sys

import torch
import triton

path, kind, sizes = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
mode = sys.argv[4] if len(sys.argv) > 4 else "plain"
import contextlib
import time
ctx = contextlib.nullcontext
if mode == "kiln":
    from kiln_worker import attribution, guards
    from kiln_worker import platform as plat
    plat.install_launch_instrumentation()
    attribution.install()
    plat.LAUNCHES.active = True

    @contextlib.contextmanager
    def ctx():
        with attribution.kernel_trace(), plat.cuda_shim(), guards.candidate_running(), guards.watch_streams(), \
                guards.OpRecorder(poison=False):
            yield
elif mode.startswith("hostdelay:"):
    delay = float(mode.split(":")[1]) * 1e-6

    def spin(*a):
        t = time.perf_counter()
        while time.perf_counter() - t < delay:
            pass
spec = importlib.util.spec_from_file_location("plain_mod", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
tuners = [(n, v) for n, v in vars(mod).items() if isinstance(v, triton.runtime.autotuner.Autotuner)]
for s in sizes:
    torch.manual_seed(0)
    if kind == "bmm":
        a = torch.rand((32, s, s), dtype=torch.float16, device="cuda")
        b = torch.rand((32, s, s), dtype=torch.float16, device="cuda")
        call = lambda: mod.bmm(a, b)
    else:
        fpa = torch.rand((s, s), dtype=torch.float16, device="cuda")
        w, scale, _ = mod.quantize_int8(torch.rand((s, s), dtype=torch.float16, device="cuda"))
        call = lambda: mod.matmul_quantize_int8(fpa, w, scale)
    before = {n: set(t.cache) for n, t in tuners}
    if mode.startswith("hostdelay:"):
        triton.knobs.runtime.launch_enter_hook = spin
    with ctx():
        call()
        torch.cuda.synchronize()
    if mode.startswith("hostdelay:"):
        triton.knobs.runtime.launch_enter_hook = None
    for n, t in tuners:
        for key in set(t.cache) - before[n]:
            pick = t.cache[key]
            idx = t.configs.index(pick)
            tm = {t.configs.index(c): v[0] if isinstance(v, (list, tuple)) else v for c, v in t.configs_timings.items()}
            best = min(tm, key=tm.get)
            print(f"[{mode}] size {s} {n}: pick {idx} ({tm[idx]*1e3:.1f} us measured), fastest measured {best} "
                  f"({tm[best]*1e3:.1f} us), 3 best {sorted(tm.values())[:3]}")
    ms = triton.testing.do_bench(call)
    print(f"[{mode}] size {s}: the call takes {ms*1e3:.1f} us (do_bench, the picks kept)")
