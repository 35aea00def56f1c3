"""Mode profile names the candidate's own Triton kernels of the profiled call (kiln profile --task, issue 14 item 5)."""
import os

from workerproc import CANDIDATES, eval_request


def test_profile_mode_names_the_candidates_own_kernels(fork_worker):
    # kiln profile --task keeps these (issue 14 item 5); the inputs' generation is the harness's, not the candidate's
    req = eval_request(os.path.join(CANDIDATES, "honest", "relu_ok.py"), mode="profile")
    r = fork_worker.request(req)
    case = r["cases"][0]
    assert case["profiled"] and case["own_kernel_names"] == ["relu_kernel"], r
