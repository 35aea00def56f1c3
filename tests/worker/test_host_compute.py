"""Work done outside torch and Triton: a candidate that takes the inputs to numpy (or Python lists),
computes there, and decorates the result with a Triton copy is invisible to the dispatcher-based
torch_compute check; the worker counts the tensor elements converted while the candidate runs
(`host_compute`). Scalars and constants (`.item()`, `np.sqrt(64)`) are fine."""
import os

from workerproc import CANDIDATES, codes, eval_request

BASE = os.path.join(CANDIDATES, "adversarial", "torch_does_work.py")   # torch.matmul + a Triton copy


def _req(expr):
    src = open(BASE).read()
    assert "        c = torch.matmul(A, B)\n" in src
    src = "import numpy as np\n" + src.replace("        c = torch.matmul(A, B)\n", f"        c = {expr}\n", 1)
    req = eval_request(BASE)
    req["candidate"] = {"source": src, "name": "host.py"}
    return req


def test_numpy_doing_the_work_is_rejected(fork_worker):
    r = fork_worker.request(_req("torch.from_numpy(np.matmul(A.cpu().numpy(), B.cpu().numpy())).to(A.device)"))
    assert r["verdict"] == "rejected" and "host_compute" in codes(r), r


def test_python_lists_doing_the_work_are_rejected(fork_worker):
    r = fork_worker.request(_req("torch.tensor(np.array(A.tolist()) @ np.array(B.tolist()), dtype=A.dtype, "
                                 "device=A.device)"))
    assert r["verdict"] == "rejected" and "host_compute" in codes(r), r


def test_scalars_and_constants_are_fine(fork_worker):
    # the work itself in torch (rejected for torch_compute), but not host_compute
    r = fork_worker.request(_req("torch.matmul(A, B) * float(np.sqrt(1.0)) * (A.sum() * 0 + 1).item()"))
    assert "host_compute" not in codes(r), r


def test_tritonbench_test_returning_numpy_is_not_host_compute(fork_worker):
    # the task's own test returns `.cpu().numpy()` / `.tolist()` results: that is the harness, not the candidate
    path = os.path.join(CANDIDATES, "tasks", "tbg_numpy_results.py")
    spec = {"format": "tritonbench_g", "path": path, "name": "tbg_numpy_results"}
    r = fork_worker.request({"op": "eval", "task": spec, "candidate": {"source": open(path).read(),
                             "name": "tbg_numpy_results.py"}, "mode": "check", "policy": "strict",
                             "limits": {"timeout_s": 120}}, timeout=150)
    assert r["verdict"] == "ok" and "host_compute" not in codes(r), r


def test_module_code_converting_is_host_compute(fork_worker):
    # the same conversions in the module's own function (above the separator) do count
    path = os.path.join(CANDIDATES, "tasks", "tbg_numpy_results.py")
    spec = {"format": "tritonbench_g", "path": path, "name": "tbg_numpy_results"}
    src = open(path).read().replace("    return out\n", "    return torch.tensor(out.cpu().numpy() * 1.0)\n", 1)
    r = fork_worker.request({"op": "eval", "task": spec, "candidate": {"source": src, "name": "cand.py"},
                             "mode": "check", "policy": "strict", "limits": {"timeout_s": 120}}, timeout=150)
    assert r["verdict"] == "rejected" and "host_compute" in codes(r), r
