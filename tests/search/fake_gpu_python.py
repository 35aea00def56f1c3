#!/usr/bin/env python3
"""A fake `python` for `kiln optimize` on a machine without a GPU (tests/search).

kiln starts `<python> -m kiln_worker [--isolation X ...]` (the JSON-lines worker) and, under ncu,
`<python> -m kiln_worker --request REQ --out RESP` (one-shot profile mode). Pass this file as
`--python` (it is executable; it needs only the Python standard library). It answers as a GPU
worker on an "NVIDIA H200" would:

  hello          not the interpreter, one device (the H200's properties)
  device_peaks   the H200's measured peaks (tests/profile/data/device.json)
  eval           mode compile/check/time; a candidate's time is a deterministic function of the
                 values in its source (`BLOCK=N`, `BLOCK_SIZE=N`, `num_warps=N`, `num_stages=N`):
                 fastest at BLOCK 1024, 4 warps; times of the reference when asked, or of the
                 request's `baseline` source in its place
  --request      writes a response with the compile facts (profile mode)

FAKE_GPU_LOG: a file to which every request's op/mode is appended.
FAKE_GPU_CHAOS=1: what real workers do now and then: stderr noise and a stray stdout line on every
  request; a compile worker that asks to be replaced (`fatal`) on its 1st request (odd pids) and dies without
  answering on its 2nd (kiln restarts it).
FAKE_GPU_SLEEP: "MODE=SECONDS,..." (compile, check, time, profile): how long each request takes.
FAKE_GPU_SLOW: "NAME=VALUE:SECONDS": a check or time request whose candidate has that value takes that long;
  when the request's limits.timeout_s is shorter, it answers verdict "timeout" at the timeout (as kiln_worker's
  deadline does).
"""
import json
import math
import os
import re
import sys
import time

DEVICE = {"index": 0, "name": "NVIDIA H200", "uuid": "GPU-fake-h200-0000", "sm_count": 132,
          "l2_bytes": 62914560, "smem_per_block_optin": 232448, "regs_per_sm": 65536,
          "total_mem_bytes": 150109880320, "cc": [9, 0], "sm_clock_mhz": 1980.0, "mem_clock_mhz": 3201.0}
PEAKS = {"dram_bytes_per_s": 4246160039563.791,
         "matmul_flops_per_s": {"bfloat16": 776273725753410.1, "float16": 746970323502832.9,
                                "float32": 51236124535334.79, "tf32": 401575671693001.9},
         "sm_clock_mhz": [345.0, 1725.0]}
VERSIONS = {"python": "3", "torch": "2.11.0+fake", "triton": "3.6.0", "driver": "fake", "cuda": "13.0"}
CASES = ["small", "wide", "fp16"]
REFERENCE_MS = 0.2


def log(what):
    path = os.environ.get("FAKE_GPU_LOG")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (what + "\n").encode())
        os.close(fd)


def pause(mode):
    for item in os.environ.get("FAKE_GPU_SLEEP", "").split(","):
        k, _, v = item.partition("=")
        if k == mode and v:
            time.sleep(float(v))


def values(src):
    v = {}
    for k in ("BLOCK_SIZE", "BLOCK", "num_warps", "num_stages"):
        m = re.findall(r"\b" + k + r"\s*=\s*(\d+)", src or "")
        if m:
            v[k] = int(m[-1])
    return v


def time_ms(src, case):
    v = values(src)
    block = v.get("BLOCK", v.get("BLOCK_SIZE", 64))
    warps = v.get("num_warps", 4)
    b = math.log2(max(block, 1)) - 10
    w = math.log2(max(warps, 1)) - 2
    t = 0.1 * (1.0 + 0.08 * b * b + 0.05 * w * w)
    return t * {"small": 0.5, "wide": 2.0, "fp16": 1.5}.get(case, 1.0)


def slow_timeout(req):
    """FAKE_GPU_SLOW: sleeps as a slow candidate would; -> a timeout response when the request's limit cut it."""
    spec = os.environ.get("FAKE_GPU_SLOW", "")
    if not spec or req.get("mode") not in ("check", "time"):
        return None
    kv, _, secs = spec.partition(":")
    k, _, v = kv.partition("=")
    if values((req.get("candidate") or {}).get("source")).get(k) != int(v):
        return None
    limit = float((req.get("limits") or {}).get("timeout_s") or 60)
    time.sleep(min(float(secs), limit))
    if limit >= float(secs):
        return None
    return {"ok": True, "verdict": "timeout", "message": "timeout after %g s" % limit,
            "reasons": [{"code": "timeout", "message": "killed after %g s" % limit}], "cases": [],
            "kernels": [], "versions": VERSIONS, "device": DEVICE, "elapsed_s": limit}


def eval_response(req):
    cand = (req.get("candidate") or {}).get("source")
    mode = req.get("mode", "check")
    cut = slow_timeout(req)
    if cut:
        return cut
    timing = req.get("timing") or {}
    v = values(cand)
    resp = {"ok": True, "verdict": "ok", "reasons": [], "message": "", "cases": [],
            "kernels": [{"name": os.environ.get("FAKE_GPU_KERNEL", "softmax_kernel"), "launches": 1, "n_regs": 40, "n_spills": 0,
                         "shared_bytes": 0, "num_warps": v.get("num_warps", 4), "num_stages": v.get("num_stages", 3),
                         "grid": [1024, 1, 1], "constexprs": {"BLOCK": v.get("BLOCK", 64)}}],
            "aten_ops": {}, "runtime_checks": {"triton_launches": 1}, "clocks": {},
            "versions": VERSIONS, "device": DEVICE, "elapsed_s": 0.01}
    if mode == "compile":
        return resp
    wanted = []
    for w in req.get("cases") or CASES:  # "@largest:K" as the real worker resolves it (here: the last K)
        wanted += CASES[-int(w.split(":")[1]):] if w.startswith("@largest:") else [w]
    for name in CASES:
        if name not in wanted:
            continue
        t = time_ms(cand, name)
        c = {"name": name, "passed": True, "trials": req.get("trials", 1), "max_abs_err": 0.0}
        if mode in ("time", "time_only"):
            c["candidate_ms"] = {"median": t, "min": t * 0.98, "max": t * 1.03, "p20": t * 0.99, "p80": t * 1.01, "n": 50}
            c["timing_method"] = "events"
            base = (req.get("baseline") or {}).get("source")
            if base is not None:   # the original timed in the reference's place (kiln optimize's verification)
                r = time_ms(base, name)
                c["reference_ms"] = {"median": r, "min": r, "max": r, "p20": r, "p80": r, "n": 50}
                c["reference_is"] = "baseline"
                c["speedup"] = r / t
                c["speedup_spread"] = [r / t * 0.99, r / t * 1.01]
            elif timing.get("time_reference"):
                r = REFERENCE_MS
                c["reference_ms"] = {"median": r, "min": r, "max": r, "p20": r, "p80": r, "n": 50}
                c["speedup"] = r / t
                c["speedup_spread"] = [r / t * 0.99, r / t * 1.01]
        resp["cases"].append(c)
    return resp


def one_shot(argv):
    req_path = argv[argv.index("--request") + 1]
    out_path = argv[argv.index("--out") + 1]
    with open(req_path) as f:
        req = json.load(f)
    log("profile")
    pause("profile")
    resp = eval_response(dict(req, mode="check"))
    with open(out_path, "w") as f:
        json.dump(resp, f)
    return 0


def serve():
    served = 0
    for line in sys.stdin:
        req = json.loads(line)
        rid = req.get("id")
        op = req.get("op")
        if op == "hello":
            out = {"ok": True, "protocol": 1, "interpreter": False, "isolation": "fork", "versions": VERSIONS,
                   "devices": [DEVICE]}
        elif op == "shutdown":
            sys.stdout.write(json.dumps({"id": rid, "ok": True}) + "\n")
            sys.stdout.flush()
            return 0
        elif op == "device_peaks":
            out = dict(PEAKS, ok=True)
        else:
            log("eval " + str(req.get("mode")) + " cases=" + ",".join(req.get("cases") or []))
            pause(str(req.get("mode")))
            out = eval_response(req)
            if os.environ.get("FAKE_GPU_CHAOS") == "1":
                served += 1
                sys.stderr.write("UserWarning: something noisy\n" * 200)
                sys.stderr.flush()
                print("a candidate printing on stdout", flush=True)
                if req.get("mode") == "compile" and served == 2:
                    os._exit(139)
                if req.get("mode") == "compile" and served == 1 and os.getpid() % 2:
                    out["fatal"] = True
        out["id"] = rid
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:2] != ["-m", "kiln_worker"]:
        sys.stderr.write("fake_gpu_python: only `-m kiln_worker` is supported, got %r\n" % (args,))
        sys.exit(2)
    sys.exit(one_shot(args) if "--request" in args else serve())
