"""What only a GPU shows, replayed from a transcript recorded on one (bench/gpu/worker_gpu_check.sh on an
NVIDIA H200, committed as tests/worker/data/h200_worker_check.jsonl): every committed candidate's recorded
verdict and reason on the compiled path match the expectation in its header (`expect-gpu` where given, else
`expect`), honest kernels carry compile facts and timings, and GPU-only faults (shared memory over the limit,
illegal memory access) got their verdicts. A record whose candidate source differs from today's file is stale
(the candidate changed after recording) and is reported, not judged: re-record on a GPU."""
import json
import os

import pytest

from workerproc import CANDIDATES, codes, header, task_spec

DATA = os.path.join(os.path.dirname(__file__), "data", "h200_worker_check.jsonl")
# The candidates added for issue 14, recorded on an NVIDIA H100 (bench/gpu/verdicts_gpu.py): read after DATA.
DATA_VERDICTS = os.path.join(os.path.dirname(__file__), "data", "h100_verdicts_check.jsonl")


def _records():
    out = []
    for path in (DATA, DATA_VERDICTS):
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                if d["request"].get("op") == "eval":
                    out.append(d)
    return out


def _candidate_files():
    files = {}
    for suite in ("adversarial", "faulty", "honest"):
        d = os.path.join(CANDIDATES, suite)
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".py"):
                files[fn] = os.path.join(d, fn)
    return files


def _suite_records():
    """The last record of each committed candidate (the suite run comes after the ad-hoc checks)."""
    files = _candidate_files()
    last = {}
    for d in _records():
        cand = d["request"].get("candidate") or {}
        name = cand.get("name")
        # the suite candidate on its own task (not the same file on a corpus task at its real size)
        if name in files and d["request"].get("mode") == "check" and \
                d["request"]["task"].get("name") == task_spec(header(files[name])["task"])["name"]:
            last[name] = d
    return files, last


def test_transcript_is_from_a_gpu():
    hello = json.loads(open(DATA).readline())
    assert hello["request"]["op"] == "hello"
    r = hello["response"]
    assert r["interpreter"] is False
    assert r["devices"][0]["cc"] == [9, 0]
    assert r["versions"]["triton"] == "3.6.0"


def _params():
    files, last = _suite_records()
    return [pytest.param(name, id=name[:-3]) for name in sorted(last)]


@pytest.mark.parametrize("name", _params())
def test_recorded_verdict_matches_expectation(name):
    files, last = _suite_records()
    rec = last[name]
    src = open(files[name]).read()
    if rec["request"]["candidate"].get("source") != src:
        pytest.skip(f"{name} changed after it was recorded on the GPU: re-record with bench/gpu/worker_gpu_check.sh")
    h = header(files[name])
    verdict, _, code = (h.get("expect-gpu") or h["expect"]).partition(" ")
    resp = rec["response"]
    assert resp["verdict"] == verdict, (name, resp["verdict"], resp.get("reasons"))
    if code:
        assert code in codes(resp), (name, code, resp.get("reasons"))


def test_every_suite_candidate_was_recorded():
    files, last = _suite_records()
    # Header-only candidates (`# candidate: corpus:...` or `self`) run another source, recorded under its name.
    header_only = {n for n, p in files.items() if header(p).get("candidate")}
    # Candidates added after this worker-level recording are covered by the eval-level one
    # (tests/eval/data/gpu, checked by test_gpu_eval_recording.py).
    with open(os.path.join(os.path.dirname(__file__), "..", "eval", "data", "gpu", "expected.jsonl")) as f:
        in_eval = {os.path.basename(json.loads(line)["id"]) for line in f}
    missing = sorted(set(files) - set(last) - header_only - in_eval)
    assert len(last) >= 40, len(last)
    assert not missing, f"not in the GPU transcript: {missing}"


def test_gpu_only_faults():
    files, last = _suite_records()
    assert last["shared_memory_over_limit.py"]["response"]["verdict"] == "compile_error"
    assert "out_of_resources" in codes(last["shared_memory_over_limit.py"]["response"])
    assert last["illegal_memory_access.py"]["response"]["verdict"] == "runtime_error"
    assert "illegal_memory_access" in codes(last["illegal_memory_access.py"]["response"])


def test_honest_time_records_carry_compile_facts_and_timings():
    timed = [d for d in _records() if d["request"].get("mode") == "time" and d["response"].get("verdict") == "ok"]
    assert len(timed) >= 4
    methods = set()
    for d in timed:
        resp = d["response"]
        for k in resp["kernels"]:
            assert k["n_regs"] > 0 and k["n_spills"] >= 0 and k["num_warps"] >= 1, k
        for c in resp["cases"]:
            ms = c["candidate_ms"]
            assert 0 < ms["min"] <= ms["median"] <= ms["max"], c
            methods.add(c["timing_method"])
        assert resp["clocks"]["sm_mhz_before"] is not None
    # Short kernels replay CUDA graphs; longer ones use events with a cold L2.
    assert {"cuda_graph", "events_cold_l2"} <= methods
