#!/usr/bin/env python3
"""How long does a TritonBench-G module's own autotuning take over its perf harness's sweep? A plain timing,
outside kiln (torch, triton and the corpus only: the harness loaded as tritonbench_g_self_repeat.py does).

    python3 bench/gpu/tbg_autotune_timing.py [--corpus DIR] [--limit S] [--out JSONL] NAME

For each perf case in order: the harness's `call_op` on its inputs (`to_cuda`), timed to a synchronize, twice:
the first call autotunes (compiles and benchmarks every config of each autotuned kernel once per new key) and
the second runs the chosen config. Prints one line per case, and last the totals: the first calls' sum is the
module's own autotune (+ compile) time, which any run of the sweep pays once; a run that stops at --limit
(default 300 s) says how many cases it reached and the mean per case. Writes one JSON line to --out.
Without CUDA the harness's tensors stay on the CPU and Triton's interpreter runs (for testing on a CPU).
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("KILN_CORPUS_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "corpus"))
    ap.add_argument("--limit", type=float, default=300.0)
    ap.add_argument("--out")
    ap.add_argument("name")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
    from tritonbench_g_self_repeat import load_sweep
    t0 = time.monotonic()
    inst, sweep, idx = load_sweep(a.corpus, a.name, "all")
    if not torch.cuda.is_available():
        inst.to_cuda = lambda x: x
    rec = {"name": a.name, "cases": len(idx), "draw_s": round(time.monotonic() - t0, 2), "rows": []}
    print(f"{a.name}: {len(idx)} perf cases, drawn in {rec['draw_s']} s", flush=True)
    for i in idx:
        if time.monotonic() - t0 > a.limit:
            break
        x = inst.to_cuda(sweep[i])
        times = []
        for _ in range(2):
            s = time.monotonic()
            inst.call_op(x)
            sync()
            times.append(round(time.monotonic() - s, 3))
        rec["rows"].append({"case": i, "first_s": times[0], "second_s": times[1]})
        print(f"{a.name} perf_{i}: first call {times[0]:.2f} s, second {times[1]:.4f} s", flush=True)
        del x
    rows = rec["rows"]
    first = sum(r["first_s"] for r in rows)
    rec.update(reached=len(rows), first_sum_s=round(first, 1), elapsed_s=round(time.monotonic() - t0, 1))
    mean = first / len(rows) if rows else float("nan")
    cut = "" if len(rows) == len(idx) else f" (cut at {a.limit:g} s: {len(idx) - len(rows)} cases not reached)"
    print(f"{a.name}: {len(rows)} of {len(idx)} cases, first calls {first:.1f} s in all, {mean:.2f} s a case"
          f"{cut}; {rec['elapsed_s']} s with the draw", flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
