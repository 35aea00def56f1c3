"""Every committed candidate (adversarial, faulty, honest) through the real worker, under the interpreter,
in fork isolation: each gets its expected verdict and reason code, and the worker carries on."""
import glob
import os
import time

import pytest

from workerproc import CANDIDATES, codes, eval_request, header


def _files(suite):
    return sorted(glob.glob(os.path.join(CANDIDATES, suite, "*.py")))


def _params(suite):
    out = []
    for f in _files(suite):
        h = header(f)
        marks = [pytest.mark.skip(reason="needs a real GPU (bench/gpu/worker_gpu_check.sh)")] \
            if h.get("gpu-only") == "true" else []
        if h.get("needs") == "race-probe":   # made by kiln (C++): through `kiln eval` in tests/eval/check_candidates.py
            marks.append(pytest.mark.skip(reason="needs kiln's race probe (test_race_probe.py sends one itself)"))
        out.append(pytest.param(f, id=os.path.basename(f)[:-3], marks=marks))
    return out


def _check(worker, path):
    h = header(path)
    verdict, _, code = h["expect"].partition(" ")
    req = eval_request(path)
    t0 = time.monotonic()
    resp = worker.request(req, timeout=req["limits"]["timeout_s"] + 60)
    took = time.monotonic() - t0
    assert resp["ok"], resp
    assert resp["verdict"] == verdict, (resp["verdict"], resp.get("reasons"), resp.get("stderr_tail", "")[-800:])
    if code:
        assert code in codes(resp), (code, resp.get("reasons"))
    if verdict == "timeout":
        assert took < req["limits"]["timeout_s"] + 15
    return resp


def test_suite_sizes():
    assert len(_files("adversarial")) >= 15
    assert len(_files("faulty")) >= 12
    for suite in ("adversarial", "faulty", "honest"):
        for f in _files(suite):
            h = header(f)
            assert "task" in h and "expect" in h and "tries" in h, f


@pytest.mark.parametrize("path", _params("honest"))
def test_honest(fork_worker, path):
    resp = _check(fork_worker, path)
    assert resp["runtime_checks"]["triton_launches"] > 0
    assert all(c["passed"] for c in resp["cases"])


@pytest.mark.parametrize("path", _params("adversarial"))
def test_adversarial(fork_worker, path):
    resp = _check(fork_worker, path)
    assert resp["verdict"] != "ok"


@pytest.mark.parametrize("path", _params("faulty"))
def test_faulty(fork_worker, path):
    _check(fork_worker, path)
    # the worker carries on: a trivial request still works right after
    assert fork_worker.request({"op": "hello"}, timeout=60)["ok"]
