#!/usr/bin/env python3
"""A `python` for `kiln optimize` on a CPU machine whose correctness is real and whose times are modelled
(tests/gen/optimize_llm_test.py): kiln runs `<this> -m kiln_worker ARGS`; this starts the real worker
(`$INTERP_TIMED_PYTHON` or `$KILN_PYTHON` or python3, `-m kiln_worker ARGS --interpret`: Triton's
interpreter) and relays the JSON-lines protocol, with three changes:

  hello   says one GPU ("interpreter-timed stand-in"), not the interpreter, so kiln's GPU-only path runs
  eval    a `time` or `compile` request is checked by the real worker in mode `check` (its verdict, its
          reasons: a compile error or a wrong result is the interpreter's own); when it passes, a `time`
          request gets each case's time from the values written in the source (`BLOCK=N`, `num_warps=N`:
          fastest at BLOCK=1024 and 4 warps, as tests/search/fake_gpu_python.py), and the request's
          `baseline` source is timed the same way in the reference's place
  other   relayed unchanged

Needs the Python standard library only (the real worker needs torch and triton).
"""
import json
import math
import os
import re
import subprocess
import sys


def values(src):
    v = {}
    for k in ("BLOCK_SIZE", "BLOCK", "num_warps"):
        m = re.findall(r"\b" + k + r"\s*=\s*(\d+)", src or "")
        if m:
            v[k] = int(m[-1])
    return v


def time_ms(src):
    v = values(src)
    b = math.log2(max(v.get("BLOCK", v.get("BLOCK_SIZE", 64)), 1)) - 10
    w = math.log2(max(v.get("num_warps", 4), 1)) - 2
    return 0.1 * (1.0 + 0.08 * b * b + 0.05 * w * w)


def timing(t):
    return {"median": t, "min": t * 0.98, "max": t * 1.03, "p20": t * 0.99, "p80": t * 1.01, "n": 50}


def add_times(req, resp):
    cand = (req.get("candidate") or {}).get("source")
    base = (req.get("baseline") or {}).get("source")
    for c in resp.get("cases") or []:
        t = time_ms(cand)
        c["candidate_ms"] = timing(t)
        c["timing_method"] = "modelled"
        if base is not None:
            r = time_ms(base)
            c["reference_ms"] = timing(r)
            c["reference_is"] = "baseline"
            c["speedup"] = r / t
            c["speedup_spread"] = [r / t * 0.99, r / t * 1.01]


def main():
    args = sys.argv[1:]
    if args[:2] != ["-m", "kiln_worker"]:
        sys.stderr.write("interp_timed_python: only `-m kiln_worker` is supported, got %r\n" % (args,))
        return 2
    py = os.environ.get("INTERP_TIMED_PYTHON") or os.environ.get("KILN_PYTHON") or "python3"
    real = subprocess.Popen([py] + args + ["--interpret"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            bufsize=1)
    for line in sys.stdin:
        req = json.loads(line)
        op, mode = req.get("op"), req.get("mode")
        fwd = dict(req)
        if op == "eval" and mode in ("time", "compile"):
            fwd["mode"] = "check"
            fwd.pop("timing", None)
            fwd.pop("baseline", None)
        real.stdin.write(json.dumps(fwd) + "\n")
        real.stdin.flush()
        out = real.stdout.readline()
        if not out:
            return 1  # the real worker died: kiln sees this one die too
        resp = json.loads(out)
        if op == "hello" and resp.get("ok"):
            resp["interpreter"] = False
            resp["devices"] = [{"index": 0, "name": "interpreter-timed stand-in", "uuid": "GPU-interp-timed",
                                "smem_per_block_optin": 232448, "cc": [9, 0]}]
        elif op == "eval" and mode == "time" and resp.get("verdict") == "ok":
            add_times(req, resp)
        sys.stdout.write(json.dumps(resp) + "\n")
        sys.stdout.flush()
        if op == "shutdown":
            break
    real.stdin.close()
    real.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
