#!/usr/bin/env python3
"""Evaluates every TritonBench-G module in the corpus against itself through the real worker.

    python3 bench/gpu/eval_tritonbench_g.py [--interpret] [--mode check|time] [--timeout 120]
                                             [--only a,b] [--perf] [--out results.jsonl]

On a GPU (default) it runs the compiled path; `--interpret` runs Triton's interpreter on the CPU (slow).
`--perf` adds the perf harness's input sweep (cases perf_0..) to the `test` case. Writes one JSON line per
module ({"name", "verdict", "reasons", "elapsed_s", ...}) and prints a summary (verdict counts)."""
import argparse
import collections
import glob
import json
import os
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "worker"))
from workerproc import CORPUS, Worker  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interpret", action="store_true")
    ap.add_argument("--mode", default="check")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--only", default="")
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--isolation", default="fork")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "tritonbench_g.jsonl"))
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(CORPUS, "tritonbench", "G", "kernels", "*.py")))
    if a.only:
        keep = set(a.only.split(","))
        files = [f for f in files if os.path.basename(f)[:-3] in keep]
    w = Worker(isolation=a.isolation, interpret=a.interpret)
    hello = w.request({"op": "hello"}, timeout=300)
    print("worker:", json.dumps({k: hello.get(k) for k in ("interpreter", "versions", "devices")})[:600], flush=True)
    counts = collections.Counter()
    t_all = time.monotonic()
    with open(a.out, "w") as out:
        for i, f in enumerate(files):
            name = os.path.basename(f)[:-3]
            spec = {"format": "tritonbench_g", "name": name, "path": f}
            perf = os.path.join(CORPUS, "tritonbench", "G", "perf", f"{name}_perf.py")
            if a.perf and os.path.exists(perf):
                spec["perf_path"] = perf
            req = {"op": "eval", "task": spec, "candidate": None, "mode": a.mode, "policy": "strict",
                   "seed": 1234, "trials": a.trials, "limits": {"timeout_s": a.timeout}}
            t0 = time.monotonic()
            try:
                resp = w.request(req, timeout=a.timeout + 120)
            except Exception as e:  # the worker died: restart it and go on
                resp = {"ok": False, "error": f"worker lost: {e}"}
                w.close()
                w = Worker(isolation=a.isolation, interpret=a.interpret)
            v = resp.get("verdict") if resp.get("ok") else "error"
            counts[v] += 1
            rec = {"name": name, "verdict": v, "reasons": resp.get("reasons"), "error": resp.get("error"),
                   "elapsed_s": round(time.monotonic() - t0, 2), "cases": resp.get("cases"),
                   "kernels": resp.get("kernels"), "stderr_tail": (resp.get("stderr_tail") or "")[-600:]}
            out.write(json.dumps(rec) + "\n")
            out.flush()
            first = (resp.get("reasons") or [{}])[0]
            print(f"[{i + 1}/{len(files)}] {name}: {v} {first.get('code', '')} {first.get('message', '')[:100]} "
                  f"({rec['elapsed_s']} s)", flush=True)
    w.close()
    print(f"summary: {dict(counts)} in {time.monotonic() - t_all:.0f} s -> {a.out}")


if __name__ == "__main__":
    main()
