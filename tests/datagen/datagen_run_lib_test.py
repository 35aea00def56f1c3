#!/usr/bin/env python3
"""Tests of bench/gpu/datagen_run_lib.py (the GPU run's re-verify pick and its table) on a made-up run folder:
only kept compiler-route samples are picked, reproducibly; the table counts per source and stage, names
unverified candidates and the programs the capture deadline left unstarted (per source), and fails (exit 1) unless every picked sample was re-verified ok.

usage: datagen_run_lib_test.py
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "bench", "gpu", "datagen_run_lib.py")
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def write_lines(path, recs):
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")


def lib(*args):
    return subprocess.run([sys.executable, LIB, *map(str, args)], capture_output=True, text=True)


def make_run(tmp):
    run = os.path.join(tmp, "run")
    os.makedirs(run)
    ids = [f"comp_11_{i:05d}" for i in range(8)] + ["kb/level1/19_ReLU"]
    write_lines(os.path.join(run, "verify_pairs.jsonl"), [{"id": i, "task": f"{i}.py"} for i in ids])
    write_lines(os.path.join(run, "verify.jsonl"), [{"id": i, "verdict": "ok"} for i in ids[:7]])
    kept = ids[:5] + ["kb/level1/19_ReLU"]  # comp 5, 6 rejected; 7 not verified
    write_lines(os.path.join(run, "sft_messages.jsonl"), [{"id": i} for i in kept])
    counts = {"programs": {"composed": 10, "kernelbench": 1}, "captured": {"composed": 9, "kernelbench": 1},
              "converted": {"composed": 8, "kernelbench": 1}, "verified": {"composed": 5, "kernelbench": 1},
              "kept": {"composed": 5, "kernelbench": 1}}
    with open(os.path.join(run, "summary.json"), "w") as f:
        json.dump({"counts": counts}, f)
    write_lines(os.path.join(run, "rejects.jsonl"), [{"stage": "capture", "reason": "eager_failed"},
                                                     {"stage": "verify", "reason": "verdict_mismatch"},
                                                     {"stage": "verify", "reason": "verdict_mismatch"}])
    open(os.path.join(run, "rejects.jsonl"), "a").write(json.dumps(
        {"stage": "capture", "reason": "not_captured", "origin": "composed"}) + "\n")
    return run, kept


def test_pick_and_table(tmp):
    run, kept = make_run(tmp)
    picked = os.path.join(tmp, "picked.jsonl")
    r = lib("pick", run, 4, picked)
    ids = [json.loads(l)["id"] for l in open(picked)]
    check(r.returncode == 0 and len(ids) == 4 and set(ids) <= set(kept), f"pick: 4 of the kept samples ({ids})")
    lib("pick", run, 4, picked + "2")
    check(open(picked).read() == open(picked + "2").read(), "pick: the same 4 every time (seeded)")
    lib("pick", run, 50, picked + "3")
    check(sorted(json.loads(l)["id"] for l in open(picked + "3")) == sorted(kept), "pick: at most every kept sample")
    timings = os.path.join(tmp, "timings.txt")
    open(timings, "w").write("capture_s 10\n")
    reverify = os.path.join(tmp, "reverify.jsonl")
    write_lines(reverify, [{"id": i, "verdict": "ok"} for i in ids])
    r = lib("table", run, reverify, timings, 360, picked)
    out = r.stdout
    check(r.returncode == 0, f"table: exit 0 when every picked sample re-verified ok ({r.returncode}: {r.stderr})")
    check("| composed | 10 | 9 | 8 | 5 | 5 |" in out and "| all | 11 | 10 | 9 | 6 | 6 |" in out,
          "table: counts per source and stage, and their sum")
    check("9 candidates (2 NOT VERIFIED)" in out, "table: candidates without a verification result named")
    check("verify:verdict_mismatch 2, capture:eager_failed 1" in out, "table: reject reasons, most first")
    check("not started by the capture deadline: 1 (composed 1): NOT ALL CAPTURED" in out,
          "table: the programs the capture deadline left unstarted, per source")
    check("6 kept in 360 s from start to outputs = 60/hour" in out, "table: samples per hour")
    check("4 ok of 4 picked" in out and "capture_s 10" in out, "table: the re-verify and the timings")
    write_lines(reverify, [{"id": ids[0], "verdict": "mismatch"}] + [{"id": i, "verdict": "ok"} for i in ids[1:3]])
    r = lib("table", run, reverify, timings, 360, picked)
    check(r.returncode == 1 and "2 ok of 4 picked" in r.stdout and f"{ids[0]} (mismatch)" in r.stdout
          and f"{ids[3]} (no result)" in r.stdout, "table: exit 1 naming a failed and a missing re-verify")
    with open(os.path.join(run, "rejects.jsonl")) as f:
        rest = [l for l in f if "not_captured" not in l]
    open(os.path.join(run, "rejects.jsonl"), "w").write("".join(rest))
    r = lib("table", run, reverify, timings, 360, picked)
    check("not started by the capture deadline: 0\n" in r.stdout, "table: none left unstarted said so")
    check(lib("table", run).returncode == 2, "usage error: exit 2")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_pick_and_table(tmp)
    print(f"datagen_run_lib: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
