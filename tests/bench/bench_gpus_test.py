#!/usr/bin/env python3
"""`kiln bench` spread over several GPUs, without one: the worker is tests/bench/fake_gpus_python.py, a host of
3 fake GPUs. Checks that every evaluation runs in a worker pinned to one GPU (CUDA_VISIBLE_DEVICES = its uuid),
that the work is split over all of them (each pair once per stage) and merged (each result line names the GPU
that answered it; the report equals the hand count and names every GPU), that --gpus N uses the first N, and
that a run interrupted with pairs in flight on several GPUs resumes where it stopped (no pair evaluated twice,
none lost, the same report as an uninterrupted run).

    bench_gpus_test.py KILN
"""
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.environ.get("KILN_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus"))
FAKE = os.path.join(HERE, "fake_gpus_python.py")
TASKS = ["19_ReLU", "20_LeakyReLU", "22_Tanh", "25_Swish"]
GPUS = ["GPU-fake-0", "GPU-fake-1", "GPU-fake-2"]

fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"), flush=True)
    fails += not cond


def write_samples(path):
    """3 samples per task: 0 and 1 correct at speedups t+1 and t+2 (task t), 2 wrong. -> the hand count."""
    kernel = open(os.path.join(ROOT, "tests", "bench_samples", "src", "relu_triton.inc.py")).read()
    model = "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return relu(x)\n"
    speedups = []
    with open(path, "w") as f:
        for t, task in enumerate(TASKS):
            for k in range(3):
                verdict = "mismatch" if k == 2 else "ok"
                tail = f"\n# fake-verdict: {verdict}\n# fake-speedup: {t + 1 + k}\n"
                f.write(json.dumps({"task": task, "sample": k, "code": kernel + model + tail}) + "\n")
                if verdict == "ok":
                    speedups.append(t + 1 + k)
    # a task's speedup: the geomean of its correct samples'; the report's: the geomean over tasks
    per_task = [math.sqrt((t + 1) * (t + 2)) for t in range(len(TASKS))]
    return {"pairs": 3 * len(TASKS), "correct": 2 * len(TASKS), "wrong": len(TASKS),
            "geomean": math.exp(sum(map(math.log, per_task)) / len(per_task)),
            "fast_2": sum(s > 2 for s in speedups) / (3 * len(TASKS))}


def bench(kiln, samples, out, log, gpus=3, extra=(), sleep="0.4", wait=True):
    env = dict(os.environ, FAKE_GPUS=str(gpus), FAKE_GPUS_LOG=log, FAKE_GPUS_SLEEP=sleep)
    cmd = [kiln, "bench", "kernelbench", "--level", "1", "--samples", samples, "--dataset", f"{CORPUS}/kernelbench",
           "--python", FAKE, "--no-db", "--check-workers", "1", "--out", out, *extra]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if not wait:
        return p
    stdout, stderr = p.communicate(timeout=300)
    return p.returncode, stdout, stderr


def read_jsonl(path):
    """The complete lines of a JSONL file: one being written while we poll may end in a partial line (a result
    line longer than stdio's buffer is written in several write()s), which is not read yet."""
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path).read().split("\n")[:-1] if l.strip()]


def check_split(name, out, log, want, gpus):
    """The pool's split and merge, from the fake workers' log and the reports."""
    evals = read_jsonl(log)
    lines = read_jsonl(os.path.join(out, "results.jsonl"))
    s = json.load(open(os.path.join(out, "summary.json")))
    check(f"{name}: every evaluation ran on a worker pinned to one of the GPUs",
          evals and all(e["cuda_visible_devices"] in gpus for e in evals), evals)
    used = {e["cuda_visible_devices"] for e in evals}
    check(f"{name}: the work went to every GPU", used == set(gpus), used)
    checks = [e["name"] for e in evals if e["mode"] == "check"]
    timed = [e["name"] for e in evals if e["mode"] == "time_only"]
    check(f"{name}: each pair checked once, each correct one timed once",
          len(checks) == len(set(checks)) == want["pairs"] and len(timed) == len(set(timed)) == want["correct"],
          (sorted(checks), sorted(timed)))
    last_gpu = {e["name"]: e["cuda_visible_devices"] for e in evals}  # the worker that answered last
    wrong = [(l["id"], l["gpu"], l["result"]["device"].get("uuid")) for l in lines
             if l["gpu"] != l["result"]["device"].get("uuid")
             or l["gpu"] != last_gpu.get(l["id"].replace("#", "_sample_") + ".py")]
    check(f"{name}: each result line names the GPU whose worker answered it", len(lines) == want["pairs"]
          and not wrong, wrong or len(lines))
    check(f"{name}: the merged report equals the hand count",
          s["outcomes"]["correct"] == want["correct"] and s["outcomes"]["wrong"] == want["wrong"]
          and abs(s["geomean_speedup"] - want["geomean"]) < 1e-6 and abs(s["fast_p"]["2"] - want["fast_2"]) < 1e-9,
          (s["outcomes"], s["geomean_speedup"], want))
    names = ", ".join("Fake GPU " + g[-1] for g in gpus)
    check(f"{name}: the report names every GPU", s["device"] == names, s["device"])
    return s


def check_resume(kiln, tmp, samples, want, full):
    """SIGINT with pairs in flight on several GPUs, then the same command: only the rest is evaluated."""
    out, log1, log2 = os.path.join(tmp, "resume"), os.path.join(tmp, "resume1.log"), os.path.join(tmp, "resume2.log")
    results = os.path.join(out, "results.jsonl")
    p = bench(kiln, samples, out, log1, sleep="1.0", wait=False)
    deadline = time.monotonic() + 120
    while p.poll() is None and len(read_jsonl(results)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err1 = p.communicate(timeout=120)
    kept = {l["id"] for l in read_jsonl(results)}
    check("resume: the first run was cut with pairs left", 0 < len(kept) < want["pairs"] and p.returncode != 0,
          f"rc {p.returncode}, {len(kept)} lines\n{err1[-800:]}")
    rc, _, err = bench(kiln, samples, out, log2, sleep="0")
    again = {e["name"] for e in read_jsonl(log2)}
    kept_names = {k.replace("#", "_sample_") + ".py" for k in kept}
    check("resume: nothing kept was evaluated again", rc == 0 and not again & kept_names and
          f"resuming: {len(kept)} pair(s) already have results" in err, (rc, sorted(again & kept_names), err[-500:]))
    lines = read_jsonl(results)
    check("resume: one line per pair in the end", len(lines) == want["pairs"] == len({l["id"] for l in lines}),
          len(lines))
    s = json.load(open(os.path.join(out, "summary.json")))
    same = {k: (s[k], full[k]) for k in ("outcomes", "geomean_speedup", "fast_p", "call_acc", "exec_acc")
            if s[k] != full[k]}
    check("resume: the report equals the uninterrupted run's", not same, same)
    # The GPUs named are those whose workers answered the kept lines: which ones did depends on when the
    # first run was cut (a GPU may have answered none of them), so not the uninterrupted run's list.
    named = ", ".join(sorted({l["result"]["device"]["name"] for l in lines}))
    check("resume: the report names the GPUs that answered", s["device"] == named, (s["device"], named))
    used = {e["cuda_visible_devices"] for e in read_jsonl(log1) + read_jsonl(log2)}
    check("resume: both runs pinned every evaluation to a GPU", used <= set(GPUS) and len(used) > 1, used)


def main():
    kiln = sys.argv[1]
    if not os.path.isdir(os.path.join(CORPUS, "kernelbench", "level1")):
        print(f"skip: no corpus at {CORPUS}")
        return 77
    tmp = tempfile.mkdtemp(prefix="kiln_bench_gpus_")
    samples = os.path.join(tmp, "samples.jsonl")
    want = write_samples(samples)

    out, log = os.path.join(tmp, "all"), os.path.join(tmp, "all.log")
    rc, stdout, err = bench(kiln, samples, out, log)
    check("3 GPUs: exit 0, one measuring and one check worker per GPU",
          rc == 0 and "on 3 measuring worker(s), 3 check worker(s)" in err, f"rc {rc}\n{stdout}\n{err}")
    full = check_split("3 GPUs", out, log, want, GPUS) if rc == 0 else {}

    out, log = os.path.join(tmp, "two"), os.path.join(tmp, "two.log")
    rc, stdout, err = bench(kiln, samples, out, log, extra=["--gpus", "2"])
    check("--gpus 2 of 3: exit 0", rc == 0 and "on 2 measuring worker(s), 2 check worker(s)" in err,
          f"rc {rc}\n{stdout}\n{err}")
    if rc == 0:
        check_split("--gpus 2 of 3", out, log, want, GPUS[:2])

    if full:
        check_resume(kiln, tmp, samples, want, full)
    if not fails:
        subprocess.run(["rm", "-rf", tmp])
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
