"""The in-place comparison through the real worker (Triton's interpreter): a TritonBench-G-style module
(tests/worker/data/tbg_inplace) whose kernel updates its input `x` in place, with elements whose value
changes from run to run (the stand-in for the racing stores of destindex_copy, kv_cache_copy and
kcache_copy_triton, whose harnesses draw destination indices with repeats). The module against itself:
the element the reference's own runs leave differently is not compared (perf_0 ok, with a note); when no
element is left, the mismatch stands (perf_1)."""
import os

from workerproc import REPO, codes  # noqa: F401

D = os.path.join(REPO, "tests", "worker", "data", "tbg_inplace")


def _req(case):
    task = {"format": "tritonbench_g", "name": "stamp_update", "path": os.path.join(D, "kernels", "stamp_update.py"),
            "perf_path": os.path.join(D, "perf", "stamp_update_perf.py")}
    return {"op": "eval", "task": task, "candidate": None, "mode": "check", "cases": [case], "trials": 1,
            "limits": {"timeout_s": 120}}


def test_unstable_input_element_is_not_compared(fork_worker):
    r = fork_worker.request(_req("perf_0"), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"), r.get("stderr_tail", "")[-800:])
    case = [c for c in r["cases"] if c["name"] == "perf_0"][0]
    assert case.get("unstable_input_elements") == 1, case
    assert "input elements" in case.get("note", ""), case


def test_no_stable_input_element_keeps_the_mismatch(fork_worker):
    r = fork_worker.request(_req("perf_1"), timeout=300)
    assert r.get("verdict") == "mismatch", (r.get("verdict"), r.get("reasons"))
    assert "input_side_effect_mismatch" in codes(r), codes(r)
