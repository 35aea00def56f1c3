#!/usr/bin/env python3
"""A fake kiln worker for WorkerRunner tests: speaks the protocol without torch.

The candidate source selects the behaviour (a line `# fake: <behaviour>`):
  ok, hang, crash, exit_silently, garbage_then_ok, forged_then_ok, restart, stderr_flood,
  sleep_child (spawns a child in the group that would outlive the worker), bad_json_only,
  compile_error, mismatch, oom_when_shared (out_of_memory in mode check, fine in time).
FAKE_WORKER_LOG: a file to which every started pid is appended (restart counting).
FAKE_WORKER_EVENTS: a file to which every eval appends `start|end MODE TAG PID MONOTONIC_NS` lines (TAG:
  the candidate's `# tag: X` line, else -); FAKE_WORKER_SLEEP: seconds each eval takes (overlap tests).
"""
import json
import os
import subprocess
import sys
import time

log = os.environ.get("FAKE_WORKER_LOG")
if log:
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
if os.environ.get("FAKE_WORKER_NO_HELLO") == "1":
    time.sleep(60)
proto = os.environ.get("FAKE_WORKER_PROTOCOL", "1")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    rid = req.get("id")
    op = req.get("op")
    if op == "hello":
        send({"id": rid, "ok": True, "protocol": int(proto), "interpreter": True, "isolation": "fork",
              "versions": {"python": "3", "torch": "fake", "triton": "fake"}, "devices": [],
              "argv": sys.argv[1:]})
        continue
    if op == "shutdown":
        send({"id": rid, "ok": True})
        break
    if op == "device_peaks":
        send({"id": rid, "ok": True, "dram_bytes_per_s": 1.0})
        continue
    cand = (req.get("candidate") or {}).get("source") or ""
    behaviour = "ok"
    tag = "-"
    for l in cand.splitlines():
        if l.startswith("# fake:"):
            behaviour = l.split(":", 1)[1].strip()
        if l.startswith("# tag:"):
            tag = l.split(":", 1)[1].strip()
    events = os.environ.get("FAKE_WORKER_EVENTS")

    def event(what):
        if events:
            fd = os.open(events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(fd, f"{what} {req.get('mode')} {tag} {os.getpid()} {time.monotonic_ns()}\n".encode())
            os.close(fd)

    event("start")
    if os.environ.get("FAKE_WORKER_SLEEP"):
        time.sleep(float(os.environ["FAKE_WORKER_SLEEP"]))
    if behaviour == "hang":
        time.sleep(3600)
    elif behaviour == "crash":
        sys.stderr.write("Fatal Python error: Segmentation fault\n")
        sys.stderr.flush()
        os._exit(139)
    elif behaviour == "exit_silently":
        sys.exit(0)
    elif behaviour in ("sleep_child", "sleep_child_own_group"):
        # The fork zygote runs each candidate in a process group of its own: so does this child.
        child = subprocess.Popen(["sleep", "3600"], start_new_session=(behaviour == "sleep_child_own_group"))
        if log:
            with open(log + ".child", "w") as f:
                f.write(str(child.pid))
        time.sleep(3600)
    elif behaviour == "garbage_then_ok":
        print("hello from the candidate")
        print("{not json")
        print("[1, 2, 3]")
    elif behaviour == "forged_then_ok":
        send({"id": "1", "ok": True, "verdict": "ok"})
        send({"id": rid + "x", "ok": True, "verdict": "ok"})
    elif behaviour == "bad_json_only":
        print("garbage")
        time.sleep(3600)
    elif behaviour == "stderr_flood":
        for i in range(20000):
            sys.stderr.write("x" * 100 + "\n")
    verdict = "ok"
    resp = {"id": rid, "ok": True, "verdict": verdict, "reasons": [], "message": "",
            "cases": [{"name": "default", "passed": True, "trials": req.get("trials", 3), "max_abs_err": 0.0,
                       "candidate_ms": {"median": 0.5, "min": 0.4, "max": 0.6, "p20": 0.45, "p80": 0.55, "n": 10},
                       "reference_ms": {"median": 1.0, "min": 0.9, "max": 1.1, "p20": 0.95, "p80": 1.05, "n": 10},
                       "speedup": 2.0, "speedup_spread": [1.8, 2.2], "timing_method": "events"}],
            "kernels": [{"name": "k", "launches": 1, "n_regs": 32, "n_spills": 0, "grid": [4, 1, 1],
                         "constexprs": {"BLOCK": 128}}],
            "aten_ops": {"aten::empty_like": 1}, "runtime_checks": {"triton_launches": 1},
            "clocks": {"sm_mhz_before": 1980, "sm_mhz_after": 1980},
            "versions": {"torch": "fake"}, "device": {"name": "Fake GPU", "uuid": "GPU-fake"},
            "elapsed_s": 0.01, "mode_seen": req.get("mode"), "pid": os.getpid(),
            "tmpdir": os.environ.get("TMPDIR")}
    if behaviour == "tmpfile":  # a module file in $TMPDIR, as the real worker writes candidates
        with open(os.path.join(os.environ["TMPDIR"], "candidate.py"), "w") as f:
            f.write("x = 1\n")
    if behaviour == "restart":
        resp["verdict"] = "runtime_error"
        resp["fatal"] = True
        resp["reasons"] = [{"code": "cuda_error", "message": "an illegal memory access was encountered"}]
    if behaviour == "compile_error":
        resp["verdict"] = "compile_error"
        resp["reasons"] = [{"code": "compile_error", "message": "boom"}]
    if behaviour == "mismatch":
        resp["verdict"] = "mismatch"
        resp["reasons"] = [{"code": "mismatch", "message": "case default, trial 0: wrong"}]
        resp["cases"][0]["passed"] = False
    if behaviour == "oom_when_shared" and req.get("mode") == "check":
        resp["verdict"] = "runtime_error"
        resp["reasons"] = [{"code": "out_of_memory", "message": "CUDA out of memory"}]
    if req.get("mode") == "time_only":
        resp["cases"][0]["trials"] = req.get("verify_trials", 1)
        resp["cases"][0]["max_abs_err"] = 0.5
    event("end")
    send(resp)
