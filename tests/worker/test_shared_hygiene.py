"""Shared isolation: a candidate that leaves a Python thread or a child process running could rewrite memory or
patch functions during the next evaluation. The worker answers, marks the response `restart_worker` and exits
(status 3) so the runner starts a fresh one; an evaluation that leaves nothing behind keeps the worker."""
import os
import signal

from workerproc import CANDIDATES, Worker, eval_request

RELU = os.path.join(CANDIDATES, "honest", "relu_ok.py")


def _req(extra_import, first_line):
    src = open(RELU).read().replace("import torch\n", f"import torch\nimport {extra_import}\n", 1)
    src = src.replace("        out = torch.empty_like(x)\n", f"        {first_line}\n        out = torch.empty_like(x)\n")
    req = eval_request(RELU)
    req["candidate"] = {"source": src, "name": "leftover.py"}
    return req


def _leaves_behind(req, verdict, what):
    w = Worker(isolation="shared")
    try:
        pid = w.request({"op": "hello"})["pid"]
        r = w.request(eval_request(RELU))
        assert r["verdict"] == "ok" and not r.get("restart_worker"), r
        r = w.request(req)
        assert r["verdict"] == verdict and r.get("restart_worker") is True, r
        assert w.proc.wait(timeout=30) == 3          # exited after answering
        assert what in w.stderr_tail()
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)           # what the candidate left in the worker's process group
        except OSError:
            pass
        w.close()
    w2 = Worker(isolation="shared")                  # what the runner does next: a fresh worker
    try:
        assert w2.request({"op": "hello"})["pid"] != pid
        assert w2.request(eval_request(RELU))["verdict"] == "ok"
    finally:
        w2.close()


def test_leftover_daemon_thread_restarts_the_worker():
    # a thread still running after the candidate returned is also `background_thread` (rejected)
    _leaves_behind(_req("threading, time", "threading.Thread(target=time.sleep, args=(600,), daemon=True).start()"),
                   "rejected", "thread")


def test_leftover_child_process_restarts_the_worker():
    # starting a process is also `process_spawn` (rejected); the process outlives the evaluation
    _leaves_behind(_req("subprocess", "subprocess.Popen(['sleep', '600'])"), "rejected", "child process")


def test_fork_isolation_is_unaffected(fork_worker):
    # the child is discarded (no restart), but the thread that outlived the candidate's call is rejected
    r = fork_worker.request(_req("threading, time",
                                 "threading.Thread(target=time.sleep, args=(600,), daemon=True).start()"))
    assert r["verdict"] == "rejected" and not r.get("restart_worker"), r
    assert "background_thread" in [x["code"] for x in r["reasons"]], r
    assert fork_worker.request({"op": "hello"})["ok"]


def test_thread_that_ends_before_returning_is_fine(fork_worker):
    r = fork_worker.request(_req("threading", "t = threading.Thread(target=lambda: None); t.start(); t.join()"))
    assert r["verdict"] == "ok", r
