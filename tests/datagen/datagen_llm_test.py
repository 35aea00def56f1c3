#!/usr/bin/env python3
"""End-to-end test of `kiln datagen --llm` (issue 19, the LLM route) on the CPU: the real binary, the real worker
under Triton's interpreter, and the scripted stand-in OpenAI-compatible server of the generate tests
(tests/gen/standin_server.py). Five composed programs, asked one at a time (--llm-concurrency 1) so that the
script's steps answer them in order:

  comp_5_00001  a right answer (row kernel, sizes from the input)          -> a sample with the model's reasoning,
                                                                              verified at 2 batch sizes
  comp_5_00002  a wrong answer (the clamp is forgotten)                    -> verify reject, verdict mismatch
  comp_5_00004  garbage (no code)                                          -> llm reject no_code
  comp_5_00006  right only at the program's batch size (sizes hard-coded)  -> verify reject at batch_size=5
  comp_5_00008  the script is spent: HTTP 500, no retries                  -> llm reject llm_error

Then a rerun of the same folder asks the model only about the program without an answer (llm.jsonl).

usage: datagen_llm_test.py KILN   ($KILN_PYTHON: python with torch and triton; exit 77 without one)
"""
import json
import os
import subprocess
import sys
import time

from datagen_harness import DATA, KILN, PY, ROOT, check, lines, main  # noqa: E402
STANDIN = os.path.join(ROOT, "tests", "gen", "standin_server.py")
PROGRAMS = ["comp_5_00001", "comp_5_00002", "comp_5_00004", "comp_5_00006", "comp_5_00008"]
REASONING = ("Step 1: the program normalises each row (L2) and clamps it.\n"
             "Step 2: one program per row; the row fits one block, so the norm is a tl.sum in registers.")


class Standin:
    def __init__(self, workdir, steps):
        os.makedirs(workdir, exist_ok=True)
        self.log = os.path.join(workdir, "requests.jsonl")
        script = os.path.join(workdir, "script.json")
        with open(script, "w") as f:
            json.dump({"steps": steps, "idle_exit_s": 120, "max_lifetime_s": 500}, f)
        port_file = os.path.join(workdir, "port")
        self.proc = subprocess.Popen([sys.executable, STANDIN, script, port_file, self.log])
        for _ in range(600):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{int(open(port_file).read())}/v1"

    def requests(self):
        return lines(self.log) if os.path.exists(self.log) else []

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def datagen(out, progs, url, *extra):
    cmd = [KILN, "datagen", "--out", out, "--from", progs, "--llm", "--llm-only", "--llm-url", url,
           "--llm-model", "standin", "--llm-concurrency", "1", "--llm-retries", "0", "--llm-timeout", "20",
           "--interpret", "--no-db", "--workers", "2", "--quiet", *extra]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=500, env=dict(os.environ, KILN_PYTHON=PY))
    print(f"$ kiln datagen --llm ... -> {r.returncode} in {time.time() - t0:.1f} s", flush=True)
    return r


def run(tmp):
    progs = os.path.join(tmp, "programs")
    os.makedirs(progs)
    for p in PROGRAMS:
        os.symlink(os.path.join(DATA, "programs", p + ".py"), os.path.join(progs, p + ".py"))
    answers = os.path.join(DATA, "llm_answers")
    steps = [
        {"file": os.path.join(answers, "l2norm_clamp_ok.py"), "plan": REASONING},
        {"file": os.path.join(answers, "clamp_layernorm_wrong.py"), "plan": "Step 1: a layer norm kernel per row."},
        {"content": "I am not sure what a kernel is."},
        {"file": os.path.join(answers, "gelu_slice_fixed_batch.py"), "plan": "Step 1: one program for all 128 outputs."},
    ]
    server = Standin(os.path.join(tmp, "standin"), steps)
    out = os.path.join(tmp, "run")
    try:
        r = datagen(out, progs, server.url)
        check(r.returncode == 0, f"the run exits 0 (got {r.returncode}: {r.stderr[-600:]})")
        reqs = server.requests()
        check(len(reqs) == 5, f"one question per program (got {len(reqs)})")
        if reqs:
            msgs = reqs[0]["request"]["messages"]
            user = msgs[-1]["content"]
            check(msgs[0]["role"] == "system" and "step by step" in msgs[0]["content"],
                  "the system message asks for step-by-step reasoning")
            check("F.normalize(x, dim=-1)" in user and "libdevice" in user and "batch size" in user,
                  "the question carries the program, Triton knowledge and the shape requirement")
        samples = lines(os.path.join(out, "sft_messages.jsonl"))
        check([s["id"] for s in samples] == ["comp_5_00001#llm"], f"one sample, the right answer's ({[s['id'] for s in samples]})")
        if samples:
            s = samples[0]
            answer = s["messages"][2]["content"]
            check(answer.startswith(REASONING + "\n\n```python\n") and "l2norm_clamp_kernel[(rows,)]" in answer,
                  "the sample's answer is the model's reasoning, then its module")
            check(s["meta"]["route"] == "llm" and s["meta"]["model"] == "standin" and s["meta"]["shapes_verified"] == 2,
                  f"meta: route llm, the model, verified at 2 shapes ({s['meta']})")
            check("ModelNew" in s["messages"][1]["content"], "the sample's instruction is datagen's")
        alpaca = lines(os.path.join(out, "sft_alpaca.jsonl"))
        check(len(alpaca) == 1 and alpaca[0]["output"].startswith(REASONING), "alpaca holds the same sample")
        rej = {x["id"]: x for x in lines(os.path.join(out, "rejects.jsonl"))}
        got = {k: (v.get("route"), v["stage"], v["reason"]) for k, v in rej.items()}
        want = {"comp_5_00002": ("llm", "verify", "verdict_mismatch"), "comp_5_00004": ("llm", "llm", "no_code"),
                "comp_5_00006": ("llm", "verify", "verdict_mismatch"), "comp_5_00008": ("llm", "llm", "llm_error")}
        check(got == want, f"rejects with their stage and reason ({got})")
        if "comp_5_00006" in rej:
            check(rej["comp_5_00006"].get("verdict", {}).get("shape") == "batch_size=5",
                  f"the hard-coded answer fails at the other batch size ({rej['comp_5_00006'].get('verdict')})")
        if "comp_5_00002" in rej:
            check(rej["comp_5_00002"]["verdict"]["shape"] == "the program's shapes", "the wrong answer fails at the program's shapes")
        pairs = lines(os.path.join(out, "verify_llm_pairs.jsonl"))
        check(sorted(p["id"] for p in pairs) == sorted(["comp_5_00001", "comp_5_00001@batch_size=3", "comp_5_00002",
                                                         "comp_5_00002@batch_size=3", "comp_5_00006",
                                                         "comp_5_00006@batch_size=5"]),
              f"each candidate verified at its shapes ({[p['id'] for p in pairs]})")
        card = open(os.path.join(out, "card.md")).read()
        check("## Yield per stage (LLM route)" in card and "| llm_verified" in card and "compiler route" not in card
              and "| LLM answered |" in card,
              "the card has the LLM route's yield table only")
        # a rerun: the answers in llm.jsonl are reused; only the program without one is asked again
        r2 = datagen(out, progs, server.url)
        check(r2.returncode == 0, f"the rerun exits 0 (got {r2.returncode}: {r2.stderr[-400:]})")
        check(len(server.requests()) == 6, f"the rerun asks only about the unanswered program ({len(server.requests()) - 5} new)")
        check(len(lines(os.path.join(out, "sft_messages.jsonl"))) == 1, "the rerun keeps the sample")
    finally:
        server.stop()
    # usage: --llm without an endpoint, --llm-only without --llm
    r = subprocess.run([KILN, "datagen", "--out", os.path.join(tmp, "u"), "--from", progs, "--llm", "--llm-only",
                        "--no-db", "--quiet"], capture_output=True, text=True, env={"PATH": os.environ.get("PATH", "")})
    check(r.returncode == 2 and "--llm" in r.stderr, f"--llm without an endpoint: exit 2 ({r.returncode}: {r.stderr.strip()})")
    r = subprocess.run([KILN, "datagen", "--out", os.path.join(tmp, "u"), "--from", progs, "--llm-only", "--quiet"],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "--llm-only needs --llm" in r.stderr, f"--llm-only without --llm: exit 2 ({r.stderr.strip()})")


if __name__ == "__main__":
    sys.exit(main("datagen_llm", [run]))
