#!/usr/bin/env python3
"""A fake `python` that answers as kiln_worker on a host of several GPUs (tests/bench/bench_gpus_test.py), so that
`kiln bench`'s multi-GPU path (one worker per GPU slot, pinned by CUDA_VISIBLE_DEVICES, the work split over them
and the results merged) runs on a machine without a GPU. Standard library only; pass it as `--python`.

  hello   unpinned (CUDA_VISIBLE_DEVICES unset): FAKE_GPUS devices (default 2), uuids GPU-fake-0, GPU-fake-1, ...;
          pinned to one of those uuids: that device alone, as index 0 (as CUDA does); pinned to anything else:
          no device
  eval    the verdict and speedup are read from the candidate's source: a line `# fake-verdict: V` (default ok;
          mismatch gets a value_mismatch reason) and `# fake-speedup: X` (default 1): the candidate's median is
          0.2 / X ms, the reference's 0.2 ms, in each of the cases `a` and `b`; the device answered is the
          worker's own

FAKE_GPUS_LOG: a file to which each eval appends a JSON line {pid, cuda_visible_devices, mode, name}.
FAKE_GPUS_SLEEP: seconds each eval takes (an interrupted run has pairs in flight).
"""
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fake_worker import VERSIONS, main  # noqa: E402
REFERENCE_MS = 0.2


def device(i, index):
    return {"index": index, "name": f"Fake GPU {i}", "uuid": f"GPU-fake-{i}", "sm_count": 132, "cc": [9, 0],
            "total_mem_bytes": 80 << 30, "l2_bytes": 50 << 20}


def devices():
    n = int(os.environ.get("FAKE_GPUS", "2"))
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    if pinned is None:
        return [device(i, i) for i in range(n)]
    return [device(i, 0) for i in range(n) if f"GPU-fake-{i}" == pinned]


def marker(src, key, default):
    m = re.findall(r"#\s*fake-" + key + r":\s*(\S+)", src or "")
    return m[-1] if m else default


def eval_response(req):
    cand = req.get("candidate") or {}
    src = cand.get("source")
    mode = req.get("mode", "check")
    verdict = marker(src, "verdict", "ok")
    mine = devices()
    resp = {"ok": True, "verdict": verdict, "message": "", "reasons": [], "cases": [], "aten_ops": {},
            "kernels": [{"name": "relu_kernel", "launches": 1, "n_regs": 16, "n_spills": 0, "shared_bytes": 0,
                         "num_warps": 4, "num_stages": 3, "grid": [1, 1, 1], "constexprs": {}}],
            "runtime_checks": {"triton_launches": 1}, "clocks": {}, "versions": VERSIONS,
            "device": mine[0] if len(mine) == 1 else {}, "elapsed_s": 0.01}
    if verdict == "mismatch":
        resp["reasons"] = [{"code": "value_mismatch", "message": "fake: outputs differ"}]
    speedup = float(marker(src, "speedup", "1"))
    for name in ("a", "b"):
        c = {"name": name, "passed": verdict == "ok", "trials": req.get("trials", 1), "max_abs_err": 0.0}
        if verdict == "ok" and mode in ("time", "time_only"):
            t = REFERENCE_MS / speedup
            c["candidate_ms"] = {"median": t, "min": t, "max": t, "p20": t, "p80": t, "n": 20}
            c["timing_method"] = "events"
            if (req.get("timing") or {}).get("time_reference", True):
                r = REFERENCE_MS
                c["reference_ms"] = {"median": r, "min": r, "max": r, "p20": r, "p80": r, "n": 20}
                c["speedup"] = r / t
                c["speedup_spread"] = [r / t, r / t]
        resp["cases"].append(c)
    return resp


def log(req):
    path = os.environ.get("FAKE_GPUS_LOG")
    if path:
        line = json.dumps({"pid": os.getpid(), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
                           "mode": req.get("mode"), "name": (req.get("candidate") or {}).get("name")})
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (line + "\n").encode())
        os.close(fd)


def evaluate(req):
    time.sleep(float(os.environ.get("FAKE_GPUS_SLEEP", "0")))
    log(req)
    return eval_response(req)


if __name__ == "__main__":
    sys.exit(main("fake_gpus_python", devices, evaluate))
