"""The worker's protocol end to end (interpreter): ops, isolation levels, bad requests, stdout isolation,
timeouts and crashes in shared mode, one-shot mode, modes compile/time/profile, policies, task formats."""
import json
import os
import subprocess

import pytest

from workerproc import CANDIDATES, CORPUS, PYTHON, REPO, Worker, codes, eval_request, task_spec

ADV = os.path.join(CANDIDATES, "adversarial")
FAULTY = os.path.join(CANDIDATES, "faulty")
HONEST = os.path.join(CANDIDATES, "honest")


def test_hello(fork_worker, shared_worker):
    for w, iso in ((fork_worker, "fork"), (shared_worker, "shared")):
        r = w.request({"op": "hello"})
        assert r["ok"] and r["protocol"] == 1 and r["interpreter"] is True and r["isolation"] == iso
        assert r["versions"]["torch"] and r["versions"]["triton"] and r["devices"]


def test_bad_requests_keep_the_worker_alive(shared_worker):
    shared_worker.send_raw = None
    shared_worker.proc.stdin.write(b"this is not json\n")
    shared_worker.proc.stdin.flush()
    r = shared_worker.recv()
    assert r["ok"] is False and "bad request" in r["error"]
    r = shared_worker.request({"op": "no_such_op"})
    assert r["ok"] is False
    r = shared_worker.request({"op": "eval", "task": {"format": "nope", "path": "/x"}})
    assert r["ok"] is False and r["error_code"] == "task_error"
    assert shared_worker.request({"op": "hello"})["ok"]


def test_shared_isolation_survives_faults(shared_worker):
    r = shared_worker.request(eval_request(os.path.join(HONEST, "relu_ok.py")))
    assert r["verdict"] == "ok", r
    for name, verdict, code in (("infinite_python.py", "timeout", "timeout"),
                                ("sys_exit.py", "crash", "sys_exit"),
                                ("exception.py", "runtime_error", "exception"),
                                ("compile_error.py", "compile_error", "triton_compile_error")):
        req = eval_request(os.path.join(FAULTY, name))
        r = shared_worker.request(req, timeout=60)
        assert r["verdict"] == verdict and code in codes(r), (name, r)
    # stdout isolation in the persistent worker: the fake line never reaches the protocol
    r = shared_worker.request(eval_request(os.path.join(ADV, "fake_protocol_print.py")))
    assert r["verdict"] == "rejected" and "protocol_injection" in codes(r)
    assert '"verdict": "ok"' in r["stderr_tail"]   # captured, reported, not interpreted
    r = shared_worker.request(eval_request(os.path.join(HONEST, "relu_ok.py")))
    assert r["verdict"] == "ok", r


def test_time_mode_under_interpreter(fork_worker):
    req = eval_request(os.path.join(HONEST, "relu_ok.py"), mode="time")
    r = fork_worker.request(req)
    assert r["verdict"] == "ok"
    assert "timing_unavailable" in codes(r)
    assert all("candidate_ms" not in c for c in r["cases"])
    assert r["kernels"] and r["kernels"][0]["name"] == "relu_kernel"
    assert r["kernels"][0]["constexprs"] == {"BLOCK": 1024}


def test_compile_mode(fork_worker):
    r = fork_worker.request(eval_request(os.path.join(HONEST, "matmul_ok.py"), mode="compile"))
    assert r["verdict"] == "ok" and r["cases"][0].get("compiled")
    r = fork_worker.request(eval_request(os.path.join(FAULTY, "syntax_error.py"), mode="compile"))
    assert r["verdict"] == "compile_error"


def test_trusted_policy_only_warns(fork_worker):
    req = eval_request(os.path.join(ADV, "torch_does_work.py"))
    req["policy"] = "trusted"
    r = fork_worker.request(req)
    assert r["verdict"] == "ok", r
    warn = [x for x in r["reasons"] if x["code"] == "torch_compute"]
    assert warn and warn[0]["severity"] == "warning"
    # a correctness hack is still a failure under trusted
    req = eval_request(os.path.join(ADV, "return_input.py"))
    req["policy"] = "trusted"
    assert fork_worker.request(req)["verdict"] == "mismatch"


def test_kernelbench_sizes_override(fork_worker):
    path = os.path.join(CORPUS, "kernelbench", "level1", "19_ReLU.py")
    if not os.path.exists(path):
        pytest.skip("corpus not present")
    req = eval_request(os.path.join(HONEST, "relu_ok.py"))
    req["task"] = {"format": "kernelbench", "name": "level1/19_ReLU", "path": path,
                   "sizes": {"batch_size": 4, "dim": 300}}
    r = fork_worker.request(req)
    assert r["verdict"] == "ok", r
    assert r["cases"][0]["shapes"] == [[4, 300]]
    # variants: several named size sets become several cases
    req["task"]["sizes"] = {"a": {"batch_size": 2, "dim": 10}, "b": {"batch_size": 3, "dim": 2000}}
    r = fork_worker.request(req)
    assert r["verdict"] == "ok" and [c["name"] for c in r["cases"]] == ["a", "b"]


def test_kiln_example_and_a_broken_rewrite(fork_worker):
    spec = task_spec("kiln:examples/softmax")
    r = fork_worker.request({"op": "eval", "task": spec, "candidate": None, "mode": "check", "trials": 2})
    assert r["verdict"] == "ok", r
    assert {c["name"] for c in r["cases"]} == {"tiny", "tiny_fp16"}
    assert r["cases"][0]["bytes"] > 0 and r["cases"][0]["flops"] > 0
    src = open(spec["path"]).read().replace("tl.exp(x - m) / s", "tl.exp(x - m) / (s + 1.0)")
    r = fork_worker.request({"op": "eval", "task": spec, "candidate": {"source": src, "name": "bad.py"},
                             "mode": "check"})
    assert r["verdict"] == "mismatch" and "value_mismatch" in codes(r)


def test_one_shot_check_and_profile(tmp_path):
    spec = task_spec("kiln:examples/softmax")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "worker"))
    for mode in ("check", "profile"):
        req = {"id": "x", "op": "eval", "task": spec, "candidate": None, "mode": mode, "profile_case": "tiny"}
        (tmp_path / "req.json").write_text(json.dumps(req))
        out = tmp_path / "resp.json"
        p = subprocess.run([PYTHON, "-m", "kiln_worker", "--interpret", "--request", str(tmp_path / "req.json"),
                            "--out", str(out)], env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        r = json.loads(out.read_text())
        assert r["ok"] and r["id"] == "x" and r["verdict"] == "ok", r
        if mode == "profile":
            assert r["cases"][0]["kernel_names"] == ["softmax_kernel"]
            assert "kiln_profile kernels: softmax_kernel" in r["stderr_tail"]


def test_tritonbench_t_with_a_triton_candidate(fork_worker):
    path = os.path.join(CORPUS, "tritonbench", "T", "kernels", "add.py")
    if not os.path.exists(path):
        pytest.skip("corpus not present")
    src = open(os.path.join(CANDIDATES, "honest", "tbt_add_ok.py")).read()
    r = fork_worker.request({"op": "eval", "task": {"format": "tritonbench_t", "name": "add", "path": path,
                                                      "entry": "add"},
                             "candidate": {"source": src, "name": "add.py"}, "mode": "check"})
    assert r["verdict"] == "ok", r
    # the torch reference itself as the "candidate": no Triton launch
    r = fork_worker.request({"op": "eval", "task": {"format": "tritonbench_t", "name": "add", "path": path,
                                                      "entry": "add"}, "candidate": None, "mode": "check"})
    assert r["verdict"] == "rejected" and "no_triton_launch" in codes(r)


def test_worker_protocol_stream_is_clean(fork_worker):
    """Every line the worker wrote so far parsed as JSON (recv would have raised otherwise); and the zygote
    stays one process after many children."""
    r = fork_worker.request({"op": "hello"})
    assert r["pid"] == fork_worker.proc.pid


def test_shared_worker_undoes_patches_and_forgets_flags(shared_worker):
    """A persistent worker must not carry one candidate's patches or flags into the next evaluation."""
    for name, code in (("patched_torch.py", "patched_torch"), ("write_file.py", "file_write"),
                       ("patch_worker.py", "patched_worker")):
        r = shared_worker.request(eval_request(os.path.join(ADV, name)))
        assert r["verdict"] == "rejected" and code in codes(r), r
        r = shared_worker.request(eval_request(os.path.join(HONEST, "relu_ok.py")))
        assert r["verdict"] == "ok" and not r["reasons"], (name, r)
        assert [k["name"] for k in r["kernels"]] == ["relu_kernel"]
    r = shared_worker.request(eval_request(os.path.join(ADV, "patched_torch.py")))
    assert r["verdict"] == "rejected"  # and it is caught again (the patch was undone in between)


def test_fresh_isolation_runs_in_process():
    w = Worker(isolation="fresh")
    try:
        assert w.request({"op": "hello"})["isolation"] == "fresh"
        r = w.request(eval_request(os.path.join(HONEST, "relu_ok.py")))
        assert r["verdict"] == "ok"
    finally:
        w.close()
