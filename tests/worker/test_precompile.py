"""precompile.py on the CPU: an autotuner's configs go to Triton's AsyncCompileMode over a thread pool before
the autotuner times them. Triton's JITFunction cannot compile here without a GPU driver, so the kernel is a
stand-in that keeps JITFunction's contract (`run(..., warmup=True)` submits its compile to the active mode,
`_do_compile` in triton/runtime/jit.py); a GPU compiles for real in gpu_precompile.py."""
import threading

import pytest

from kiln_worker import precompile


class Config:
    def __init__(self, **kw):
        self.kw = kw

    def all_kwargs(self):
        return dict(self.kw)


class StandInKernel:
    """Submits one compile per distinct config to the active AsyncCompileMode (none: compiles inline)."""

    def __init__(self, compile_fn):
        self.compile_fn = compile_fn
        self.calls = []
        self.cache = {}

    def run(self, *args, **kwargs):
        from triton.runtime._async_compile import active_mode
        assert not args, "the arguments go by name"
        self.calls.append(kwargs)
        key = kwargs["BLOCK"], kwargs.get("num_warps")
        mode = active_mode.get()
        if mode is None:
            self.cache[key] = self.compile_fn(kwargs)
            return self.cache[key]
        return mode.submit(key, lambda: self.compile_fn(kwargs), lambda k: self.cache.__setitem__(key, k))


class StandInAutotuner:
    def __init__(self, fn, nargs):
        self.fn = fn
        self.nargs = nargs


def configs(n):
    return [Config(BLOCK=32 << i, num_warps=4) for i in range(n)]


def test_configs_compile_side_by_side_on_threads_that_end():
    both = threading.Barrier(2, timeout=10)   # passes only when two compiles run at the same time
    where = []

    def compile_fn(kw):
        where.append(threading.current_thread().name)
        both.wait()
        return ("compiled", kw["BLOCK"])

    k = StandInKernel(compile_fn)
    at = StandInAutotuner(k, {"x": 1, "n": 1024})
    before = precompile.STATS["configs"]
    assert precompile.precompile(at, configs(4), {"grid": (1,), "warmup": False}, 4) == 4
    assert precompile.STATS["configs"] - before == 4
    # every config ran once, without a launch, with the call's own arguments and its config's values
    assert [c["BLOCK"] for c in k.calls] == [32, 64, 128, 256]
    assert all(c["warmup"] is True and c["x"] == 1 and c["n"] == 1024 and c["grid"] == (1,) for c in k.calls)
    # compiled off the calling thread, and in the kernel's cache once the mode ended
    assert where and all(n.startswith("kiln-autotune-compile") for n in where)
    assert sorted(k.cache) == [(32, 4), (64, 4), (128, 4), (256, 4)]
    assert not [t for t in threading.enumerate() if t.name.startswith("kiln-autotune-compile")]
    from triton.runtime._async_compile import active_mode
    assert active_mode.get() is None


def test_a_failing_config_is_left_to_the_autotuner():
    def compile_fn(kw):
        if kw["BLOCK"] == 64:
            raise RuntimeError("out of resources")
        return kw["BLOCK"]

    k = StandInKernel(compile_fn)

    def run(*args, **kwargs):
        if kwargs["BLOCK"] == 128:
            raise ValueError("a heuristic that fails on this config")
        return StandInKernel.run(k, *args, **kwargs)
    k.run = run
    failed = precompile.STATS["failed"]
    n = precompile.precompile(StandInAutotuner(k, {"x": 1}), configs(4), {"grid": (1,), "warmup": False}, 4)
    assert n == 3 and precompile.STATS["failed"] == failed + 1
    assert sorted(k.cache) == [(32, 4), (256, 4)]   # the failed compile left no kernel: the autotuner retries


@pytest.mark.parametrize("n_threads, n_configs", [(0, 4), (1, 4), (8, 1)])
def test_nothing_to_do_compiles_nothing(n_threads, n_configs):
    k = StandInKernel(lambda kw: kw["BLOCK"])
    assert precompile.precompile(StandInAutotuner(k, {"x": 1}), configs(n_configs), {"grid": (1,)}, n_threads) == 0
    assert k.calls == []


def test_no_nesting_and_no_second_mode():
    """A config's run that meets another autotuner (a kernel calling a kernel's wrapper) compiles serially."""
    from triton.runtime._async_compile import AsyncCompileMode
    from concurrent.futures import ThreadPoolExecutor
    k = StandInKernel(lambda kw: kw["BLOCK"])
    with ThreadPoolExecutor(1) as pool, AsyncCompileMode(pool):
        assert precompile.precompile(StandInAutotuner(k, {"x": 1}), configs(3), {"grid": (1,)}, 4) == 0
    inner = []

    def compile_fn(kw):
        return kw["BLOCK"]
    k2 = StandInKernel(compile_fn)

    def run(*args, **kwargs):
        inner.append(precompile.precompile(StandInAutotuner(k2, {"y": 2}), configs(2), {"grid": (1,)}, 4))
        return StandInKernel.run(k2, *args, **kwargs)
    k2.run = run
    precompile.precompile(StandInAutotuner(k2, {"y": 2}), configs(2), {"grid": (1,)}, 4)
    assert inner == [0, 0]


def test_threads_from_the_environment(monkeypatch):
    monkeypatch.setenv("KILN_AUTOTUNE_COMPILE_THREADS", "0")
    assert precompile.threads() == 0
    monkeypatch.setenv("KILN_AUTOTUNE_COMPILE_THREADS", "6")
    assert precompile.threads() == 6
    monkeypatch.setenv("KILN_AUTOTUNE_COMPILE_THREADS", "many")
    assert precompile.threads() == 0
    monkeypatch.delenv("KILN_AUTOTUNE_COMPILE_THREADS")
    assert 1 <= precompile.threads() <= 16
    monkeypatch.setattr(precompile, "ENABLED", [False])   # a request in mode compile
    monkeypatch.setenv("KILN_AUTOTUNE_COMPILE_THREADS", "6")
    assert precompile.threads() == 0


_MODES_PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from kiln_worker import platform as plat
plat.select_mode(True)
from kiln_worker import server
server._prepare()
from kiln_worker import precompile
from kiln_worker.evaluate import Evaluator
seen = []
for mode in json.loads(sys.argv[3]):
    req = dict(json.loads(sys.argv[2]), mode=mode)
    ev = Evaluator(req)
    try:
        r = ev.run()
    finally:
        ev.release()
    seen.append([mode, r.get("verdict"), precompile.ENABLED[0]])
print(json.dumps(seen))
"""


def test_a_compile_request_turns_it_off():
    """kiln optimize's compile workers are processes side by side: a request in mode compile compiles an
    autotuner's configs serially, the next request in another mode side by side again (in the same worker)."""
    import json
    import os
    import subprocess
    import sys
    from workerproc import CANDIDATES, REPO, task_spec
    with open(os.path.join(CANDIDATES, "honest", "relu_ok.py")) as f:
        src = f.read()
    req = {"op": "eval", "task": task_spec("relu"), "candidate": {"source": src, "name": "relu_ok.py"},
           "trials": 1, "limits": {"timeout_s": 120}}
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", _MODES_PROBE, os.path.join(REPO, "worker"), json.dumps(req),
                        json.dumps(["compile", "check", "compile"])], capture_output=True, text=True, timeout=300,
                       env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    seen = json.loads(p.stdout.strip().splitlines()[-1])
    assert [s[2] for s in seen] == [False, True, False], seen
    assert all(s[1] == "ok" for s in seen), seen


def test_install_wraps_prune_configs_and_keeps_its_answer(monkeypatch):
    from triton.runtime.autotuner import Autotuner
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setattr(precompile, "_installed", [False])
    monkeypatch.setattr(Autotuner, "prune_configs", Autotuner.prune_configs)   # put back after the test
    seen = []
    monkeypatch.setattr(precompile, "precompile", lambda at, cfgs, kw, n: seen.append((at, len(cfgs), kw)))
    precompile.install()
    at = Autotuner.__new__(Autotuner)
    at.configs, at.early_config_prune, at.perf_model, at.nargs = configs(3), None, None, {"x": 1}
    got = Autotuner.prune_configs(at, {"grid": (1,)})
    assert got == at.configs and seen == [(at, 3, {"grid": (1,)})]
    seen.clear()
    at.early_config_prune = lambda cfgs, nargs, **kw: cfgs[:1]   # pruned to one: what the autotuner gets
    assert Autotuner.prune_configs(at, {"grid": (1,)}) == at.configs[:1] and seen[0][1] == 1


def test_install_does_nothing_under_the_interpreter(monkeypatch):
    from triton.runtime.autotuner import Autotuner
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(precompile, "_installed", [False])
    orig = Autotuner.prune_configs
    precompile.install()
    assert Autotuner.prune_configs is orig


def test_audit_flag_is_per_thread():
    """guards' re-entry flag: a compile thread inside the audit hook must not blind the hook on another thread."""
    from kiln_worker import guards
    seen = []
    inside = threading.Event()
    release = threading.Event()

    def other():
        guards._in_audit.on = True   # as while that thread runs the hook
        inside.set()
        release.wait(10)
        guards._in_audit.on = False
    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    seen.append(getattr(guards._in_audit, "on", False))
    release.set()
    t.join()
    assert seen == [False]
