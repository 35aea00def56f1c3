"""An autotuned kernel's configs compiled in parallel before its autotuner times them.

`@triton.autotune` meets a new key (a new input size) and times every config in turn, compiling each on the
way: on an H200, int8_matmul_quantization's 38 configs made kiln optimize's baseline take 68 s, most of it
compiling one config after another on one core of sixteen. Triton's compiler releases the GIL for most of
its work (MLIR passes, LLVM, ptxas), and Triton 3.6 has a hook for compiling ahead
(`triton.runtime._async_compile.AsyncCompileMode`: while one is active, `JITFunction._do_compile` submits the
compile to an executor and puts the kernel in its cache when the mode ends).

`install()` wraps `Autotuner.prune_configs`, which the autotuner calls only for a key it has not tuned (and
from `Autotuner.warmup`): before the configs go back to the autotuner, each is run with `warmup=True` (no
launch) inside an AsyncCompileMode over a thread pool, so the compiles run side by side; the autotuner then
finds every kernel compiled and only times them. Nothing else changes: the same configs, the same timings,
the same pick. A config whose compile fails is left to the autotuner, which compiles it again and handles
the error as it always does; anything that goes wrong here only costs the time saved.

Threads: `KILN_AUTOTUNE_COMPILE_THREADS` (default: the CPUs this process may use, at most 16; 0 or 1: off,
Triton's own serial compile); off in mode `compile` (ENABLED). The pool is shut down before the autotuner goes on, so no thread outlives it
(evaluate.py rejects a candidate that leaves threads running). Under the interpreter nothing compiles and
nothing is done.
"""
from __future__ import annotations

import os

_installed = [False]
# Off for a request in mode `compile`: kiln optimize's compile workers are processes side by side already
# (`--compile-jobs`), each compiling its own candidate; threads in each would oversubscribe the cores.
ENABLED = [True]
STATS = {"configs": 0, "failed": 0}


def threads() -> int:
    """How many compile threads (<= 1: off)."""
    if not ENABLED[0]:
        return 0
    raw = os.environ.get("KILN_AUTOTUNE_COMPILE_THREADS", "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            return 0
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return min(n, 16)


def precompile(autotuner, configs, kwargs, n_threads: int) -> int:
    """Compiles `configs` of `autotuner` for the arguments of the call it is tuning (autotuner.nargs and the
    call's `kwargs`, which carry `grid` and `warmup`) on `n_threads` threads. -> the number of configs
    submitted. Never raises."""
    if n_threads <= 1 or len(configs) <= 1:
        return 0
    nargs = getattr(autotuner, "nargs", None)
    if not isinstance(nargs, dict):
        return 0
    try:
        from concurrent.futures import ThreadPoolExecutor
        from triton.runtime._async_compile import AsyncCompileMode, active_mode
    except Exception:  # noqa: BLE001 - another Triton: its own serial compile
        return 0
    if active_mode.get() is not None:   # no nesting: a config's warmup that meets another autotuner, or a
        return 0                        # caller's own mode, compiles as that mode does
    base = {k: v for k, v in kwargs.items() if k != "warmup"}
    submitted = 0
    try:
        with ThreadPoolExecutor(max_workers=min(n_threads, len(configs)),
                                thread_name_prefix="kiln-autotune-compile") as pool:
            with AsyncCompileMode(pool, ignore_errors=True):
                for config in configs:
                    try:
                        call = {**nargs, **base, **config.all_kwargs()}
                        autotuner.fn.run(warmup=True, **call)
                        submitted += 1
                    except Exception:  # noqa: BLE001 - the autotuner meets it again and handles it
                        STATS["failed"] += 1
    except Exception:  # noqa: BLE001 - never worse than Triton's serial compile
        pass
    STATS["configs"] += submitted
    return submitted


def install() -> None:
    """Wraps Autotuner.prune_configs (once per process; compiled runs only)."""
    if _installed[0]:
        return
    _installed[0] = True
    if os.environ.get("TRITON_INTERPRET") == "1":
        return
    try:
        from triton.runtime.autotuner import Autotuner
    except Exception:  # noqa: BLE001 - no Triton
        return
    orig = Autotuner.prune_configs

    def prune_configs(self, kwargs, *rest, **kw):
        configs = orig(self, kwargs, *rest, **kw)
        try:
            precompile(self, list(configs), kwargs, threads())
        except Exception:  # noqa: BLE001
            pass
        return configs

    prune_configs.__wrapped__ = orig
    Autotuner.prune_configs = prune_configs
