#!/usr/bin/env python3
"""The baseline: one fresh Python process per candidate, as KernelBench's own harness works.

    python3 fresh_harness.py DIR/requests --out results.jsonl

Runs `python3 -m kiln_worker --request R.json --out resp.json` for each request in turn: the same worker
code and the same protocol (trials, poisoning, runtime checks, timing) as `kiln eval --batch`, but a new
interpreter that imports torch and triton, initialises CUDA and compiles, per candidate."""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("requests")
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=os.environ.get("KILN_PYTHON", sys.executable))
    ap.add_argument("--every", type=int, default=1,
                    help="run every k-th request only (its per-candidate cost does not depend on how many run)")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.environ.get("KILN_WORKER_DIR") or os.path.join(REPO, "worker"))
    files = sorted(glob.glob(os.path.join(a.requests, "*.json")))[::max(1, a.every)]
    t0 = time.time()
    with open(a.out, "w") as out:
        for i, r in enumerate(files):
            resp_path = r + ".resp"
            t = time.time()
            p = subprocess.run([a.python, "-m", "kiln_worker", "--request", r, "--out", resp_path], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
            try:
                resp = json.load(open(resp_path))
            except Exception:
                resp = {"verdict": "crash", "rc": p.returncode}
            out.write(json.dumps({"id": os.path.basename(r)[:-5], "verdict": resp.get("verdict"),
                                  "elapsed_s": time.time() - t}) + "\n")
            out.flush()
            print(f"[{i + 1}/{len(files)}] {os.path.basename(r)} {resp.get('verdict')} {time.time() - t:.1f}s",
                  file=sys.stderr, flush=True)
    print(json.dumps({"harness": "fresh", "n": len(files), "wall_s": time.time() - t0}))


if __name__ == "__main__":
    main()
