#!/usr/bin/env python3
"""`kiln optimize --dry-run` over every TritonBench-G module, as a new user would try it without a GPU.

Each module goes through the whole front end of the loop: task loading, static analysis, the choice of
kernel, the search space, the original checked against itself, and the first candidates checked for
correctness under Triton's interpreter. A run must end with exit 0 (candidates checked) or with a clear
`error:` line; a crash (signal), a hang (the time limit) or an exit without an error line is a bug.

usage: dry_run_corpus.py KILN CORPUS_KERNELS_DIR [--out rows.jsonl] [--only SUBSTR] [--timeout 240]
       [--jobs N]      (KILN_PYTHON: python with torch+triton)
Prints one row per module and a summary; exit 1 when any run crashed, hung or failed without saying why.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor


def run_one(kiln, path, timeout, tmp):
    name = os.path.basename(path)[:-3]
    js = os.path.join(tmp, name + ".json")
    t = time.time()
    try:
        p = subprocess.run([kiln, "optimize", path, "--dry-run", "--no-db", "-q", "--budget-seconds", "60",
                            "--max-evals", "4", "--json", js], capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", "", (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    row = {"module": name, "rc": rc, "seconds": round(time.time() - t, 1)}
    errors = [l for l in err.splitlines() if "error:" in l]
    if rc == 0:
        try:
            j = json.load(open(js))
            cands = j.get("candidates", [])
            row["kernel"] = j.get("kernel")
            row["candidates"] = len(cands)
            row["verdicts"] = sorted({c.get("verdict", "?") for c in cands})
        except (OSError, ValueError) as e:
            row.update(verdict="bug", why=f"exit 0 without a readable report: {e}")
            return row
        row["verdict"] = "checked"
    elif rc == "timeout":
        row.update(verdict="bug", why="hang: no end within the limit")
    elif isinstance(rc, int) and rc < 0:
        row.update(verdict="bug", why=f"killed by signal {-rc}: " + (err.strip().splitlines() or [""])[-1][:200])
    elif errors:
        row.update(verdict="error", why=errors[-1][:300])
    else:
        row.update(verdict="bug", why="exit %s without an error line: %s" % (rc, (err.strip().splitlines() or [""])[-1][:200]))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kiln")
    ap.add_argument("corpus")
    ap.add_argument("--out", default="")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    files = sorted(os.path.join(args.corpus, f) for f in os.listdir(args.corpus)
                   if f.endswith(".py") and args.only in f)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(lambda p: run_one(args.kiln, p, args.timeout, tmp), files):
            rows.append(row)
            print("%-8s %-32s %6.1fs  %s" % (row["verdict"], row["module"], row["seconds"],
                                            row.get("why") or "kernel %s, %s candidates %s" % (
                                                row.get("kernel"), row.get("candidates"), ",".join(row.get("verdicts", [])))),
                  flush=True)
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print("summary:", ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    if args.out:
        with open(args.out, "w") as fh:
            for r in rows:
                fh.write(json.dumps(r, sort_keys=True) + "\n")
    return 1 if counts.get("bug") else 0


if __name__ == "__main__":
    sys.exit(main())
