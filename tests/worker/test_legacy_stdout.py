"""TritonBench's legacy stdout execution accuracy (worker/kiln_worker/legacy.py): the gold file and the
candidate's file (its module + the gold's test part) each run as a script; the candidate passes when it runs
and its stdout equals the gold's exactly."""
import os

import pytest

from workerproc import codes  # noqa: F401 - the conftest's worker fixtures come with it

SEP = "#" * 146

MODULE = '''import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _add_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    return out
'''

# unseeded: a fresh process draws the same numbers (torch's start-of-process seed), so the gold prints the
# same values in both runs
TEST_PRINTS = '''
def test_add():
    x = torch.randn(8, device="cuda")
    y = torch.randn(8, device="cuda")
    return {"test_case_1": add(x, y)}


result_gold = test_add()
print(result_gold["test_case_1"].sum().item() > -1000, result_gold["test_case_1"].shape)
print(__name__)
'''

TEST_SILENT = '''
def test_add():
    x = torch.randn(8, device="cuda")
    y = torch.randn(8, device="cuda")
    return {"test_case_1": add(x, y)}


result_gold = test_add()
'''


def _task(tmp_path, test):
    p = tmp_path / "legacy_add.py"
    p.write_text(MODULE + "\n" + SEP + "\n" + test)
    return {"format": "tritonbench_g", "name": "legacy_add", "path": str(p)}


def _eval(worker, spec, source, legacy=True):
    req = {"op": "eval", "task": spec, "candidate": {"source": source, "name": "legacy_add.py"},
           "mode": "check", "trials": 1, "limits": {"timeout_s": 60}}
    if legacy:
        req["legacy_stdout"] = True
    return worker.request(req, timeout=120)


def test_same_output_passes(fork_worker, tmp_path):
    r = _eval(fork_worker, _task(tmp_path, TEST_PRINTS), MODULE)
    lg = r["legacy_stdout"]
    assert r["verdict"] == "ok" and lg["passed"] and lg["equal"], lg
    assert lg["gold"]["stdout"] == "True torch.Size([8])\n__main__\n", lg
    assert lg["candidate"]["stdout"] == lg["gold"]["stdout"]
    assert "legacy_stdout" not in _eval(fork_worker, _task(tmp_path, TEST_PRINTS), MODULE, legacy=False)


def test_printing_candidate_differs(fork_worker, tmp_path):
    """Correct on kiln's check, but it prints a line of its own: the legacy check fails it."""
    src = MODULE.replace("    return out\n", "    print('launched')\n    return out\n")
    r = _eval(fork_worker, _task(tmp_path, TEST_PRINTS), src)
    lg = r["legacy_stdout"]
    assert r["verdict"] == "ok", r.get("reasons")
    assert lg["candidate"]["ran"] and not lg["equal"] and not lg["passed"], lg
    assert lg["candidate"]["stdout"].startswith("launched\n")


def test_silent_gold_passes_a_wrong_candidate(fork_worker, tmp_path):
    """A gold that prints nothing: any candidate that runs and prints nothing passes (TritonBench issue 7),
    a wrong one too; a candidate that raises does not."""
    spec = _task(tmp_path, TEST_SILENT)
    wrong = MODULE.replace("tl.load(x_ptr + offs, mask=m) + tl.load", "tl.load(x_ptr + offs, mask=m) - tl.load")
    r = _eval(fork_worker, spec, wrong)
    lg = r["legacy_stdout"]
    assert r["verdict"] == "mismatch", r.get("reasons")
    assert lg["gold"]["stdout"] == "" and lg["passed"], lg
    crash = MODULE.replace("    out = torch.empty_like(x)\n", "    raise RuntimeError('boom')\n")
    r = _eval(fork_worker, spec, crash)
    lg = r["legacy_stdout"]
    assert r["verdict"] == "runtime_error", r.get("reasons")
    assert lg["equal"] and not lg["candidate"]["ran"] and not lg["passed"], lg
    assert "boom" in lg["candidate"]["error"]


def test_only_tritonbench_tasks_get_it(fork_worker):
    from workerproc import CORPUS
    kb = os.path.join(CORPUS, "kernelbench", "level1", "19_ReLU.py")
    if not os.path.exists(kb):
        pytest.skip("corpus not present")
    with open(kb) as f:
        src = f.read() + "\nModelNew = Model\n"
    r = fork_worker.request({"op": "eval", "task": {"format": "kernelbench", "name": "19_ReLU", "path": kb,
                                                    "sizes": {"batch_size": 2, "dim": 64}},
                             "candidate": {"source": src, "name": "19_ReLU_gold.py"}, "policy": "trusted",
                             "mode": "check", "trials": 1, "legacy_stdout": True,
                             "limits": {"timeout_s": 60}}, timeout=120)
    assert r["ok"] and r["verdict"] == "ok", r
    assert "legacy_stdout" not in r


def test_gold_not_run_after_the_candidate_replaced_torch(fork_worker, tmp_path):
    """The gold's script runs after the candidate's: when the candidate replaced part of torch (here a
    torch.zeros that feeds the gold's prints), the gold is not run and the sample does not pass."""
    src = MODULE + "\n_real_zeros = torch.zeros\ntorch.zeros = lambda *a, **k: _real_zeros(*a, **k)\n"
    r = _eval(fork_worker, _task(tmp_path, TEST_SILENT), src)
    lg = r["legacy_stdout"]
    assert r["verdict"] == "rejected", r.get("reasons")
    assert not lg["passed"] and not lg["gold"]["ran"] and "torch.zeros" in lg.get("note", ""), lg


def test_shared_worker_restarts_after_the_legacy_scripts(tmp_path):
    """The legacy scripts run whole test files in the worker's process; a shared worker is replaced after them
    (a later request must not see the allocator or globals they left), and kept when none ran."""
    from workerproc import Worker
    w = Worker(isolation="shared")
    try:
        r = _eval(w, _task(tmp_path, TEST_PRINTS), MODULE, legacy=False)
        assert r["verdict"] == "ok" and not r.get("restart_worker"), r
        r = _eval(w, _task(tmp_path, TEST_PRINTS), MODULE)
        assert r["verdict"] == "ok" and r["legacy_stdout"]["passed"], r
        assert r.get("restart_worker") is True, r
        assert w.proc.wait(timeout=30) == 3          # exited after answering: the runner starts a fresh one
    finally:
        w.close()
