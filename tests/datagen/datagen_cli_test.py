#!/usr/bin/env python3
"""End-to-end tests of `kiln datagen` (issue 19) on the CPU, from Inductor output recorded on an H100
(tests/datagen/captures.jsonl, by bench/gpu/datagen_run.sh) over the composed programs in tests/datagen/programs:
conversion, verification under Triton's interpreter (kiln eval's batch, strict policy), output formats, card,
resume; the composer's programs in eager torch; benchmark exclusion; usage errors.

usage: datagen_cli_test.py KILN   ($KILN_PYTHON: python with torch and triton; exit 77 without one)
"""
import json
import os
import subprocess
import sys
import time

from datagen_harness import DATA, KILN, PY, ROOT, check, lines, main  # noqa: E402
CORPUS = os.environ.get("KILN_CORPUS_DIR") or os.path.join(ROOT, "..", "shared", "corpus")


def kiln(*args, timeout=600):
    env = dict(os.environ, KILN_PYTHON=PY)
    return subprocess.run([KILN, "datagen", *args], capture_output=True, text=True, timeout=timeout, env=env)


def inputs_with_a_twin(tmp):
    """The recorded programs plus a twin of one (another name, other formatting, same capture): dedupe's case."""
    progs = os.path.join(tmp, "programs")
    os.makedirs(progs)
    for f in os.listdir(os.path.join(DATA, "programs")):
        os.symlink(os.path.join(DATA, "programs", f), os.path.join(progs, f))
    text = open(os.path.join(DATA, "programs", "comp_5_00007.py")).read()
    twin = text.replace("comp_5_00007", "comp_5_90007").replace("    return [", "    # the same program\n    return [")
    open(os.path.join(progs, "comp_5_90007.py"), "w").write(twin)
    caps = os.path.join(tmp, "captures.jsonl")
    recs = lines(os.path.join(DATA, "captures.jsonl"))
    with open(caps, "w") as f:
        for c in recs:
            f.write(json.dumps(c) + "\n")
        f.write(json.dumps(dict(next(c for c in recs if c["id"] == "comp_5_00007"), id="comp_5_90007")) + "\n")
    return progs, caps


def pipeline(tmp):
    out = os.path.join(tmp, "run")
    progs, caps = inputs_with_a_twin(tmp)
    args = ["--out", out, "--from", progs, "--captures", caps, "--interpret", "--no-db", "--workers", "2", "--quiet"]
    t0 = time.time()
    r = kiln(*args)
    check(r.returncode == 0, f"pipeline exits 0 (got {r.returncode}: {r.stderr[-400:]})")
    first_s = time.time() - t0
    msgs = lines(os.path.join(out, "sft_messages.jsonl"))
    check(len(msgs) == 17, f"17 samples from the 17 recorded programs and a twin (got {len(msgs)})")
    rej = lines(os.path.join(out, "rejects.jsonl"))
    check([(x["id"], x["reason"]) for x in rej] == [("comp_5_90007", "duplicate")],
          f"dedupe: the renamed, reformatted twin is a duplicate reject ({[(x['id'], x['reason']) for x in rej]})")
    for m in msgs:
        roles = [x["role"] for x in m["messages"]]
        code = m["messages"][2]["content"]
        if roles != ["system", "user", "assistant"] or "class ModelNew" not in code or "@triton.jit" not in code:
            check(False, f"{m['id']}: a system/user/assistant chat whose answer holds the ModelNew")
            break
        if any(b in code for b in ("torch._inductor", "triton_heuristics", "extern_kernels", "async_compile")):
            check(False, f"{m['id']}: no inductor runtime in the answer")
            break
    else:
        check(True, "every sample: chat format, plain @triton.jit ModelNew, no inductor runtime")
    alpaca = lines(os.path.join(out, "sft_alpaca.jsonl"))
    sharegpt = lines(os.path.join(out, "sft_sharegpt.jsonl"))
    check(len(alpaca) == 17 and all({"instruction", "input", "output"} <= set(a) for a in alpaca), "alpaca records")
    check(len(sharegpt) == 17 and all(s["conversations"][0]["from"] == "human" for s in sharegpt), "sharegpt records")
    verify = lines(os.path.join(out, "verify.jsonl"))
    check(len(verify) == 18 and all(v["verdict"] == "ok" for v in verify), "every candidate verified ok by kiln eval")
    card = open(os.path.join(out, "card.md")).read()
    check("## Yield per stage" in card and "| composed | 18 | 18 | 18 | 18 | 17 |" in card,
          "card: yield and per-source counts")
    check("| normalization |" in card and "generated (kiln datagen)" in card, "card: families and licences")
    # resume: a second run verifies nothing again (the results are kept) and writes the same samples
    t0 = time.time()
    r = kiln(*args)
    again_s = time.time() - t0
    check(r.returncode == 0 and len(lines(os.path.join(out, "verify.jsonl"))) == 18,
          "a second run keeps the 18 verification results")
    check(again_s < first_s / 2, f"a second run resumes ({again_s:.1f} s after {first_s:.1f} s)")
    check(lines(os.path.join(out, "sft_messages.jsonl")) == msgs, "a second run writes the same samples")


def composer_eager(tmp):
    out = os.path.join(tmp, "comp")
    r = kiln("--out", out, "--compose", "30", "--seed", "11", "--compose-small", "--stop-after", "programs", "--quiet")
    check(r.returncode == 0, "composer writes 30 programs")
    listing = os.path.join(tmp, "list.jsonl")
    with open(listing, "w") as f:
        for p in lines(os.path.join(out, "programs.jsonl")):
            f.write(json.dumps({"id": p["id"], "path": p["path"]}) + "\n")
    res = os.path.join(tmp, "eager.jsonl")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "worker"))
    subprocess.run([PY, "-m", "kiln_worker.inductor_capture", "--eager-only", "--list", listing, "--out", res,
                    "--jobs", "2"], env=env, capture_output=True, timeout=600)
    recs = lines(res)
    bad = [(x["id"], x.get("error")) for x in recs if not x["ok"]]
    check(len(recs) == 30 and not bad, f"all 30 composed programs run in eager torch (failures: {bad[:3]})")


def benchmark_exclusion(tmp):
    relu = os.path.join(CORPUS, "kernelbench", "level1", "19_ReLU.py")
    if not os.path.exists(relu):
        print("skip  benchmark exclusion: no corpus at " + CORPUS)
        return
    # a KernelBench task in disguise: other names and sizes, same Model
    text = open(relu).read().replace("batch_size = ", "batch_size = 7 + 0 * ").replace("(self, x", "(self, inp") \
        .replace("relu(x)", "relu(inp)")
    progs = os.path.join(tmp, "bench")
    os.makedirs(progs)
    open(os.path.join(progs, "my_relu.py"), "w").write(text)
    out = os.path.join(tmp, "benchrun")
    r = kiln("--out", out, "--from", progs, "--benchmarks", CORPUS, "--stop-after", "programs", "--quiet")
    rej = lines(os.path.join(out, "rejects.jsonl"))
    check(r.returncode == 0 and [x["reason"] for x in rej] == ["benchmark_task"]
          and "19_ReLU" in rej[0]["message"], "a KernelBench task in disguise is excluded")
    r = kiln("--out", out, "--from", progs, "--benchmarks", CORPUS, "--stop-after", "programs", "--allow-benchmark",
             "--quiet")
    check(r.returncode == 0 and len(lines(os.path.join(out, "programs.jsonl"))) == 1, "--allow-benchmark keeps it")


def usage(tmp):
    r = kiln("--out", os.path.join(tmp, "u"))
    check(r.returncode == 2 and "nothing to do" in r.stderr, "no programs: usage error")
    r = kiln("--out", os.path.join(tmp, "u"), "--from", "/nonexistent/dir")
    check(r.returncode == 2 and "/nonexistent/dir" in r.stderr, "missing --from: error naming it")
    bad = os.path.join(tmp, "bad.py")
    open(bad, "w").write("class Model(:\n    pass\n")
    r = kiln("--out", os.path.join(tmp, "u"), "--from", bad, "--format", "kernelbench")
    check(r.returncode == 2 and "bad.py:1:" in r.stderr, f"a syntax error is located ({r.stderr.strip()[:160]})")
    r = kiln("--out", os.path.join(tmp, "u"), "--compose", "1", "--stop-after", "nowhere")
    check(r.returncode == 2 and "--stop-after" in r.stderr, "bad --stop-after: usage error")


if __name__ == "__main__":
    sys.exit(main("datagen_cli", [usage, benchmark_exclusion, pipeline, composer_eager]))
