#!/usr/bin/env python3
"""Data-driven end-to-end test: every committed candidate (tests/candidates/{adversarial,faulty,honest})
through `kiln eval --batch` with the REAL worker, asserting the verdict and reason code in its header.

Usage: check_candidates.py KILN [--gpu] [--suite SUITE ...] [--only NAME ...] [--policy strict|trusted]

The faulty suite is meant to exercise the worker's fault handling; under policy strict kiln's static
checks reject most of it before it runs (no @triton.jit kernel, ctypes, ...), so CTest runs it with
--policy trusted (static findings become warnings) and the adversarial and honest suites with strict.

- Expectation: tests/eval/expect_overrides.txt (kiln's static layer decides some candidates before the
  worker sees them), else `expect-gpu:` on a GPU, else `expect:`.
- Skips (exit 77) when $KILN_PYTHON lacks torch/triton or the worker package is missing, and, with --gpu,
  when there is no GPU. Without --gpu the worker runs under Triton's interpreter and `gpu-only` candidates
  are skipped.
Stdlib only.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "worker"))
from workerproc import CANDIDATES, CORPUS, REPO, header  # noqa: E402  (shared with the worker's tests)

SKIP = 77


def overrides():
    out = {}
    path = os.path.join(HERE, "expect_overrides.txt")
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, verdict, *code = line.split()
                out[name] = (verdict, code[0] if code else "")
    return out


def pair(path, h):
    ref = h["task"]
    p = {"id": os.path.relpath(path, CANDIDATES), "timeout_s": float(h.get("timeout_s", 20)),
         "policy": h.get("policy", "strict")}
    if h.get("mode"):
        p["mode"] = h["mode"]   # a timing hack is only seen in mode time
    if ref.startswith("corpus:"):
        p["task"] = os.path.join(CORPUS, ref[len("corpus:"):])
    elif ref.startswith("kiln:"):
        d = os.path.join(REPO, ref[len("kiln:"):])
        name = os.path.basename(d)
        p.update(task=os.path.join(d, name + ".py"), bench=os.path.join(d, "bench.py"), entry=name, format="kiln")
    else:
        p["task"] = os.path.join(CANDIDATES, "tasks", ref + ".py")
    cand = h.get("candidate")
    if cand == "self":
        p["candidate"] = None
    elif cand and cand.startswith("corpus:"):
        p["candidate"] = os.path.join(CORPUS, cand[len("corpus:"):])
    else:
        p["candidate"] = path
    return p


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    kiln, gpu = args[0], "--gpu" in args
    suites = [a for i, a in enumerate(args) if i > 0 and args[i - 1] == "--suite"] or ["adversarial", "faulty", "honest"]
    only = [a for i, a in enumerate(args) if i > 0 and args[i - 1] == "--only"]
    policy = next((a for i, a in enumerate(args) if i > 0 and args[i - 1] == "--policy"), None)
    py = os.environ.get("KILN_PYTHON") or os.path.join(REPO, ".venv", "bin", "python3")
    if not os.path.exists(os.path.join(REPO, "worker", "kiln_worker", "__main__.py")):
        print("skip: the worker package is not there yet")
        return SKIP
    probe = "import torch, triton; print(torch.cuda.is_available())"
    try:
        has_cuda = subprocess.run([py, "-c", probe], capture_output=True, text=True, timeout=300).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        has_cuda = ""
    if has_cuda not in ("True", "False"):
        print(f"skip: {py} cannot import torch and triton")
        return SKIP
    if gpu and has_cuda != "True":
        print("skip: no GPU")
        return SKIP
    ov = overrides()
    pairs, expect = [], {}
    for suite in suites:
        d = os.path.join(CANDIDATES, suite)
        for f in sorted(os.listdir(d)):
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            name = f"{suite}/{f}"
            if only and f[:-3] not in only and name not in only:
                continue
            h = header(path)
            if "task" not in h or "expect" not in h:
                continue
            if h.get("gpu-only") == "true" and not gpu:
                continue
            e = h.get("expect-gpu") if gpu and h.get("expect-gpu") else h["expect"]
            verdict, _, code = e.partition(" ")
            expect[name] = ov.get(name, (verdict, code.strip()))
            p = pair(path, h)
            if policy:
                p["policy"] = policy
            pairs.append(p)
    with tempfile.TemporaryDirectory() as tmp:
        pf, of = os.path.join(tmp, "pairs.jsonl"), os.path.join(tmp, "results.jsonl")
        with open(pf, "w") as f:
            for p in pairs:
                f.write(json.dumps(p) + "\n")
        cmd = [kiln, "eval", "--batch", pf, "--out", of, "--no-db", "--python", py, "--isolation", "fork"]
        if not gpu:
            cmd.append("--interpret")
        rc = subprocess.run(cmd).returncode
        results = {}
        with open(of) as f:
            for line in f:
                r = json.loads(line)
                results[r.get("id")] = r
    failures = []
    for name, (verdict, code) in sorted(expect.items()):
        r = results.get(name)
        if r is None:
            failures.append(f"{name}: no result line")
            continue
        if "error" in r:
            failures.append(f"{name}: error: {r['error']}")
            continue
        res = r["result"]
        codes = [x.get("code") for x in res.get("reasons", [])]
        ok = res["verdict"] == verdict and (not code or code in codes)
        print(f"{'PASS' if ok else 'FAIL'}  {name:45s} want {verdict} {code or '-':24s} got {res['verdict']} {codes}")
        if not ok:
            failures.append(f"{name}: want {verdict} {code}, got {res['verdict']} {codes}: {res.get('message', '')[:300]}")
    if rc not in (0,):
        failures.append(f"kiln eval --batch exited {rc}")
    if not expect:
        failures.append("no candidate selected (none has both a task and an expect header)")
    if len(results) != len(pairs):
        failures.append(f"{len(pairs)} pairs but {len(results)} result lines")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(expect) - len([f for f in failures if ':' in f])} of {len(expect)} candidates as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
