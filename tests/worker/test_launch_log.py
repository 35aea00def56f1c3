"""platform.LaunchLog's per-name counts: a kernel's `launches` fact is kept in O(1) per launch (a scan of every
launch recorded so far made each launch slower than the last: an autotuner's thousands of timing launches
took ~0.6 ms each on an H200), and agrees with the launches recorded since the last reset."""
from kiln_worker import platform as plat


def test_counts_follow_the_recorded_launches_and_reset():
    log = plat.LaunchLog()
    for name in ["a", "b", "a", "a"]:
        log.append({"name": name, "own": True})
    assert log.counts == {"a": 3, "b": 1}
    assert log.counts["a"] == sum(1 for l in log.launches if l["name"] == "a")
    assert log.own_count() == 4
    log.reset()
    assert log.launches == [] and log.counts == {} and log.counts["a"] == 0


def test_kernel_facts_take_the_count(monkeypatch):
    log = plat.LaunchLog()
    monkeypatch.setattr(plat, "LAUNCHES", log)
    for _ in range(3):
        rec = {"name": "k", "own": True, "grid": [4, 1, 1], "constexprs": {"BLOCK": 64}}
        log.append(rec)
        plat._note_kernel(rec, None)
    assert log.kernels["k"]["launches"] == 3 and log.kernels["k"]["grid"] == [4, 1, 1]
    plat._note_kernel({"name": "k", "own": True, "grid": None, "constexprs": {}}, None)   # compiled, not launched
    assert log.kernels["k"]["launches"] == 3



_COMPILED_PATH = r"""
import json, sys
import triton
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction
from kiln_worker import platform as plat

seen = []

def fake_run(self, *args, grid, warmup, **kwargs):   # Triton's launch: the hook counts it
    seen.append(("run", self.__name__ if hasattr(self, "__name__") else "?", plat.LAUNCHES.quiet))
    if plat.LAUNCHES.quiet == 0:
        plat.LAUNCHES.hook_launches += 1
    return None

def fake_bench(self, *args, config, **meta):          # Triton's benchmark: launches its kernel
    seen.append(("bench", plat.LAUNCHES.bench_fn is jit))
    JITFunction.run(jit, grid=(1,), warmup=False)
    JITFunction.run(other, grid=(1,), warmup=False)  # another kernel (a config's pre_hook): recorded
    return [1.0, 1.0, 1.0]

JITFunction.run = fake_run
Autotuner._bench = fake_bench
plat._install_compiled()

def k(x, BLOCK: triton.language.constexpr):
    pass
def o(x):
    pass
jit, other = triton.jit(k), triton.jit(o)
at = Autotuner.__new__(Autotuner)
at.fn = Heuristics(jit, jit.arg_names, {"BLOCK": lambda a: 64})
plat.LAUNCHES.active = True
Autotuner._bench(at, config=None)
JITFunction.run(jit, grid=(1,), warmup=False)        # the launch the result comes from
print(json.dumps({"seen": seen, "bench_fn_after": plat.LAUNCHES.bench_fn is None,
                  "recorded": [l["name"] for l in plat.LAUNCHES.launches], "quiet": plat.LAUNCHES.quiet,
                  "counts": dict(plat.LAUNCHES.counts)}))
"""


def test_an_autotuners_timing_launches_are_not_recorded(tmp_path):
    """The compiled path's wrappers (platform._install_compiled) with Triton's launch and benchmark replaced
    by stand-ins (no GPU here): inside Autotuner._bench the benchmarked kernel (under @triton.heuristics) runs
    quiet and unrecorded; another kernel launched there and the launch after it are recorded."""
    import json
    import os
    import subprocess
    import sys
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "worker"))
    env.pop("TRITON_INTERPRET", None)
    script = tmp_path / "compiled_path.py"   # Triton reads a @jit function's source from its file
    script.write_text(_COMPILED_PATH)
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["seen"][0] == ["bench", True]
    assert out["seen"][1][2] == 1 and out["seen"][2][2] == 0   # quiet inside, not for the other kernel
    assert out["recorded"] == ["o", "k"] and out["counts"] == {"o": 1, "k": 1}
    assert out["bench_fn_after"] and out["quiet"] == 0
