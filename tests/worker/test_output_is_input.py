"""A perf harness whose call_op returns an input buffer the kernel writes in place (tests/worker/data/
tbg_alias_out, as context_attn_fwd's harness returns `o`), through the real worker (Triton's interpreter).
With large inputs the candidate runs on the master inputs; when it leaves the returned buffer as drawn
(perf_0: nothing to write), the reference gets the inputs drawn again, not the same master, whose output
would be the candidate's own memory (H100, issue 16: context_attn_fwd rejected, output_aliases_reference).
A candidate that writes nothing where the reference writes (perf_1) must still fail."""
import os

from workerproc import REPO, codes

D = os.path.join(REPO, "tests", "worker", "data", "tbg_alias_out")
KERNEL = os.path.join(D, "kernels", "fill_valid.py")


def _req(case, candidate=None):
    task = {"format": "tritonbench_g", "name": "fill_valid", "path": KERNEL,
            "perf_path": os.path.join(D, "perf", "fill_valid_perf.py")}
    return {"op": "eval", "task": task, "candidate": candidate, "mode": "check", "cases": [case], "trials": 1,
            "limits": {"timeout_s": 200}}


def test_large_returned_input_left_alone_is_ok(fork_worker):
    r = fork_worker.request(_req("perf_0"), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"), r.get("stderr_tail", "")[-800:])


def test_large_returned_input_written_is_ok(fork_worker):
    r = fork_worker.request(_req("perf_1"), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"), r.get("stderr_tail", "")[-800:])


def test_small_returned_input_left_alone_is_ok(fork_worker):
    r = fork_worker.request(_req("perf_2"), timeout=300)
    assert r.get("verdict") == "ok", (r.get("verdict"), r.get("reasons"))


def test_candidate_that_writes_nothing_fails(fork_worker):
    with open(KERNEL) as f:
        lazy = f.read().replace("LAUNCH = True", "LAUNCH = False")
    r = fork_worker.request(_req("perf_1", {"source": lazy, "name": "fill_valid.py"}), timeout=300)
    assert r.get("verdict") != "ok", (r.get("verdict"), r.get("reasons"))
    assert "value_mismatch" in codes(r), codes(r)
