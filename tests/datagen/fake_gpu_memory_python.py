#!/usr/bin/env python3
"""A fake `python` that answers as kiln_worker on one GPU of little memory (tests/datagen/datagen_memory_test.py),
so that `kiln datagen`'s verification runs kiln eval's check workers, sharing that GPU under the batch admission,
on a machine without one. Standard library only; pass it as `--python`.

  hello   one device, "Fake GPU" (uuid GPU-fake-0), of FAKE_GPU_MEM_BYTES bytes (default 10 GiB)
  eval    verdict ok; the candidate's peak is FAKE_GPU_PEAKS[the task name's last part] bytes (a JSON object; default 64 MiB),
          reported as memory.peak_bytes. While it runs (FAKE_GPU_SLEEP seconds, default 0.3) the peak is held in
          FAKE_GPU_INFLIGHT (a folder: one file per eval in flight, across processes); when the peaks in flight
          exceed the GPU's memory, the answer is the worker's infrastructure out-of-memory outcome, as a real GPU
          would make it.

FAKE_GPU_LOG: a file to which each eval appends a JSON line {name, mode, start, end, oom, pid} (time.monotonic()
seconds, one clock for every process of the machine).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fake_worker import VERSIONS, main  # noqa: E402

GPU_MEM = int(os.environ.get("FAKE_GPU_MEM_BYTES", str(10 << 30)))
DEVICE = {"index": 0, "name": "Fake GPU", "uuid": "GPU-fake-0", "sm_count": 132, "cc": [9, 0],
          "total_mem_bytes": GPU_MEM, "l2_bytes": 50 << 20}


def in_flight_bytes(folder):
    total = 0
    for f in os.listdir(folder):
        try:
            with open(os.path.join(folder, f)) as fh:
                total += int(fh.read() or 0)
        except (OSError, ValueError):
            pass  # an eval that just ended
    return total


def evaluate(req):
    name = os.path.basename((req.get("task") or {}).get("name", ""))
    peak = int(json.loads(os.environ.get("FAKE_GPU_PEAKS", "{}")).get(name, 64 << 20))
    folder = os.environ["FAKE_GPU_INFLIGHT"]
    mine = os.path.join(folder, f"{os.getpid()}-{req.get('id')}")
    start = time.monotonic()
    with open(mine, "w") as f:
        f.write(str(peak))
    time.sleep(float(os.environ.get("FAKE_GPU_SLEEP", "0.3")))
    oom = in_flight_bytes(folder) > GPU_MEM
    os.remove(mine)
    end = time.monotonic()
    log = os.environ.get("FAKE_GPU_LOG")
    if log:
        line = json.dumps({"name": name, "mode": req.get("mode"), "start": start, "end": end, "oom": oom,
                           "pid": os.getpid()})
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (line + "\n").encode())
        os.close(fd)
    if oom:
        return {"ok": False, "error_code": "infra_out_of_memory",
                "error": "out of memory (OutOfMemoryError): fake: the GPU is shared",
                "memory": {"requested_bytes": peak, "in_use_bytes": GPU_MEM - peak}}
    return {"ok": True, "verdict": "ok", "message": "", "reasons": [], "aten_ops": {},
            "cases": [{"name": "default", "passed": True, "trials": req.get("trials", 1), "max_abs_err": 0.0}],
            "kernels": [], "runtime_checks": {"triton_launches": 1}, "clocks": {}, "versions": VERSIONS,
            "device": DEVICE, "elapsed_s": end - start, "memory": {"footprint_bytes": peak // 2, "peak_bytes": peak}}


def devices():
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES")
    return [DEVICE] if pinned in (None, "GPU-fake-0") else []


if __name__ == "__main__":
    sys.exit(main("fake_gpu_memory_python", devices, evaluate))
