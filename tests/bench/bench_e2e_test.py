#!/usr/bin/env python3
"""`kiln bench` end to end with the REAL worker (Triton's interpreter without a GPU) on the sample set of
tests/bench_samples (make_samples.py): the five channels, each one task with five samples (correct, wrong,
hacked, crashing, unparsable), and the report numbers against the hand count; resume (nothing re-evaluated),
the records database as cache, --gold on one task per benchmark, and the usage errors.

    bench_e2e_test.py KILN [--gpu]      exit 77 when $KILN_PYTHON lacks torch/triton (or, with --gpu, a GPU;
                                        --gpu is not yet checked on one: reasons there may add foreign_kernel)
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.environ.get("KILN_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus"))
SAMPLES = os.path.join(ROOT, "tests", "bench_samples")
PY = os.environ.get("KILN_PYTHON", os.path.join(ROOT, ".venv", "bin", "python3"))

# channel -> (arguments, the reason codes of the hacked, failed and wrong samples: the hand count)
CHANNELS = {
    "tbg": (["tritonbench-g", "--samples", f"{SAMPLES}/tbg.jsonl", "--dataset", f"{CORPUS}/tritonbench"],
            {"hacked": {"process_spawn": 1}, "failed": {"triton_compile_error": 1}, "wrong": {"value_mismatch": 1}}),
    "tbt": (["tritonbench-t", "--samples", f"{SAMPLES}/tbt.jsonl", "--dataset", f"{CORPUS}/tritonbench"],
            {"hacked": {"no_triton_launch": 1, "torch_compute": 1}, "failed": {"exception": 1},
             "wrong": {"value_mismatch": 1}}),
    "kb1": (["kernelbench", "--level", "1", "--samples", f"{SAMPLES}/kb1", "--dataset", f"{CORPUS}/kernelbench",
             "--size", "batch_size=4", "--size", "dim=64"],
            {"hacked": {"torch_compute": 1}, "failed": {"exception": 1}, "wrong": {"value_mismatch": 1}}),
    "kb2": (["kernelbench", "--level", "2", "--samples", f"{SAMPLES}/kb2.jsonl", "--dataset", f"{CORPUS}/kernelbench"],
            {"hacked": {"no_triton_launch": 1, "torch_compute": 1}, "failed": {"exception": 1},
             "wrong": {"value_mismatch": 1}}),
    "kb3": (["kernelbench", "--level", "3", "--samples", f"{SAMPLES}/kb3.jsonl", "--dataset", f"{CORPUS}/kernelbench"],
            {"hacked": {"patched_torch": 1}, "failed": {"syntax_error": 1}, "wrong": {"value_mismatch": 1}}),
}
HAND = {"correct": 1, "wrong": 1, "hacked": 1, "failed": 1, "no_code": 1, "error": 0}

fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"), flush=True)
    fails += not cond


def run(kiln, args, common):
    p = subprocess.run([kiln, "bench", *args, *common], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def check_channel(kiln, key, out, common, gpu):
    args, reasons = CHANNELS[key]
    rc, stdout, err = run(kiln, args + ["--out", out], common)
    check(f"{key}: exit 0", rc == 0, f"rc {rc}\n{stdout}\n{err}")
    if rc != 0:
        return
    s = json.load(open(os.path.join(out, "summary.json")))
    check(f"{key}: schema", s["schema_version"] == 1 and s["tasks"] == 1 and s["samples"] == 5
          and s["wall_s"] > 0, s)
    check(f"{key}: outcomes equal the hand count", s["outcomes"] == HAND, s["outcomes"])
    # call = correct + wrong = 2/5, exec = 1/5; pass@1 = 1/5, pass@5 = 1 - C(4,5)/C(5,5) = 1, pass@10 undefined
    check(f"{key}: call/exec accuracy", abs(s["call_acc"] - 0.4) < 1e-9 and abs(s["exec_acc"] - 0.2) < 1e-9, s)
    check(f"{key}: pass@k", abs(s["pass_at_k"]["1"]["value"] - 0.2) < 1e-9 and s["pass_at_k"]["5"]["value"] == 1.0
          and s["pass_at_k"]["10"]["value"] is None, s["pass_at_k"])
    check(f"{key}: fast_0 = exec", abs(s["fast_p"]["0"] - 0.2) < 1e-9, s["fast_p"])
    if gpu:
        check(f"{key}: timed", s["timed"] and s["geomean_speedup"] is not None, s)
    else:
        check(f"{key}: untimed fast_p unavailable", s["fast_p"]["1"] is None and s["geomean_speedup"] is None, s)
    got = {k: s["reasons"][k] for k in ("hacked", "failed", "wrong")}
    check(f"{key}: reasons", got == reasons, got)
    rows = list(csv.DictReader(open(os.path.join(out, "tasks.csv"))))
    check(f"{key}: tasks.csv", len(rows) == 1 and rows[0]["correct"] == "1" and rows[0]["hacked"] == "1", rows)
    html = open(os.path.join(out, "report.html")).read()
    check(f"{key}: report.html self-contained", "<svg" in html and "<script" not in html and "href=" not in html)
    check(f"{key}: table on stdout", "| Model | Call | Exec | Speedup |" in stdout, stdout)


def main():
    kiln = sys.argv[1]
    gpu = "--gpu" in sys.argv[2:]
    try:
        cuda = subprocess.run([PY, "-c", "import torch, triton; print(torch.cuda.is_available())"],
                              capture_output=True, text=True, timeout=120).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        cuda = ""
    if cuda not in ("True", "False") or (gpu and cuda != "True"):
        print("skip: no torch/triton" if not gpu else "skip: no GPU")
        return 77
    os.environ["KILN_PYTHON"] = PY
    tmp = tempfile.mkdtemp(prefix="kiln_bench_e2e_")
    db = os.path.join(tmp, "kiln.db")
    common = ["--db", db, "--trials", "1", "--quiet"] + ([] if gpu else ["--workers", "2"])
    for key in CHANNELS:
        check_channel(kiln, key, os.path.join(tmp, key), common, gpu)

    # resume: a rerun evaluates nothing (every pair has its line in results.jsonl)
    out = os.path.join(tmp, "kb1")
    lines = open(os.path.join(out, "results.jsonl")).read().count("\n")
    rc, _, err = run(kiln, CHANNELS["kb1"][0] + ["--out", out], ["--db", db, "--trials", "1"])
    check("resume: nothing re-evaluated", rc == 0 and "resuming: 4 pair(s) already have results" in err
          and open(os.path.join(out, "results.jsonl")).read().count("\n") == lines, err)
    # --report-only: nothing evaluated; a sample without a result line is an error (exit 1)
    kept = open(os.path.join(out, "results.jsonl")).read().splitlines(keepends=True)
    open(os.path.join(out, "results.jsonl"), "w").write("".join(kept[1:]))
    rc, _, err = run(kiln, CHANNELS["kb1"][0] + ["--out", out, "--report-only"], ["--db", db])
    s = json.load(open(os.path.join(out, "summary.json")))
    check("report-only: a missing result is an error", rc == 1 and s["outcomes"]["error"] == 1 and s["wall_s"] is None
          and s["reasons"]["error"] == {"no_result": 1}, f"rc {rc} {s['outcomes']}")
    # records database: without results.jsonl the deterministic verdicts come from the cache
    os.remove(os.path.join(out, "results.jsonl"))
    rc, _, err = run(kiln, CHANNELS["kb1"][0] + ["--out", out], common)
    cached = [json.loads(l)["result"].get("from_cache") for l in open(os.path.join(out, "results.jsonl"))]
    check("records database: served from the cache", rc == 0 and cached == [True] * 4, cached)

    # gold sanity channels on one task each
    for name, args in [("gold tritonbench-g", ["tritonbench-g", "--dataset", f"{CORPUS}/tritonbench", "--task",
                                               "add_example"]),
                       ("gold tritonbench-t", ["tritonbench-t", "--dataset", f"{CORPUS}/tritonbench", "--task", "abs"]),
                       ("gold kernelbench", ["kernelbench", "--level", "1", "--dataset", f"{CORPUS}/kernelbench",
                                             "--task", "19_ReLU", "--size", "batch_size=4", "--size", "dim=64"])]:
        out = os.path.join(tmp, name.replace(" ", "_"))
        rc, stdout, err = run(kiln, args + ["--gold", "--out", out], common)
        s = json.load(open(os.path.join(out, "summary.json"))) if rc == 0 else {}
        check(name, rc == 0 and s.get("exec_acc") == 1.0 and s.get("gold") is True, f"rc {rc} {s}\n{err}")

    # usage errors: exit 2 and a message naming the problem
    bad_line = os.path.join(tmp, "bad.jsonl")
    open(bad_line, "w").write('{"task": "abs", "code": "x"}\n{"task": 3}\n')
    missing_task = os.path.join(tmp, "missing.jsonl")
    open(missing_task, "w").write('{"task": "no_such_op", "code": "x"}\n')
    tb = ["--dataset", f"{CORPUS}/tritonbench"]
    for name, args, want in [
        ("no dataset", ["tritonbench-t", "--samples", bad_line], "--dataset DIR is required"),
        ("missing task", ["tritonbench-t", "--samples", missing_task, *tb], f"{missing_task}:1: task 'no_such_op' not found"),
        ("unreadable samples", ["tritonbench-t", "--samples", os.path.join(tmp, "nope.jsonl"), *tb], "nope.jsonl"),
        ("bad sample line", ["tritonbench-t", "--samples", bad_line, *tb], f"{bad_line}:2:1: error: key 'task'"),
        ("kernelbench without level", ["kernelbench", "--samples", bad_line, "--dataset", CORPUS], "--level"),
        ("samples and gold", ["tritonbench-t", "--gold", "--samples", bad_line, *tb], "either --samples"),
    ]:
        rc, _, err = run(kiln, args + ["--out", os.path.join(tmp, "err")], ["--db", db])
        check(f"error: {name}", rc == 2 and want in err, f"rc {rc}: {err}")
    if not fails:
        subprocess.run(["rm", "-rf", tmp])
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
