#!/usr/bin/env python3
"""End-to-end test of `kiln generate` against the scripted stand-in server (standin_server.py), with the
real worker under Triton's interpreter ($KILN_PYTHON; exit 77 without torch/triton).

usage: generate_test.py KILN

  scenarios   one run, six chains (--samples 6) of tests/candidates/tasks/relu.py, each answered by its
              script: a compile error then a fix; a wrong result then a right one; a hack (rejected, fed
              back) then an honest kernel; garbage without code then code; a 429 (Retry-After) then
              success; a hang past --llm-timeout then success. Every chain ends verified at the expected
              turn; the feedback sent to the model is compared with tests/gen/golden_e2e/*.txt
              (KILN_UPDATE_GOLDEN=1 rewrites them); the API key goes out as a bearer token and nowhere else.
  cache       the same run again into a new folder with the same records database: every answer comes from
              the cache (the server gets no request), same outcome.
  https       over TLS: an untrusted certificate fails the call, a trusted one (SSL_CERT_FILE) works.
  resume      the corpus' KernelBench example (kernelbench/examples/model_ex_add.py): a wrong answer, then the
              endpoint fails (500, no retries): exit 1, no module; --resume with a server that answers right
              continues the chain at turn 2 with the whole conversation: exit 0.
  exhausted   wrong answers for every turn: exit 1, status failed, no module written.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import e2e_lib as lib
from e2e_lib import ROOT, Standin, ans, check, golden

CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "kernelbench", "examples")
if not os.path.isdir(CORPUS):
    CORPUS = "/work/shared/corpus/kernelbench/examples"
SECRET = "sk-standin-secret-0123"


def generate(kiln, out, url, db, *args):
    cmd = [kiln, "generate", "--interpret", "--out", out, "--db", db, "--llm-url", url, "--llm-model", "standin",
           "--llm-timeout", "2"] + list(args)
    env = dict(os.environ, KILN_LLM_API_KEY=SECRET)
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    print(f"$ kiln generate ... {' '.join(args)}  -> {p.returncode} in {time.time() - t0:.1f} s")
    return p


def transcript(out):
    return [json.loads(l) for l in open(os.path.join(out, "transcript.jsonl"))]


def scenarios(kiln, work):
    ok = ans("relu_ok.py")
    steps = [ans("relu_compile_error.py"), ok,
             ans("relu_wrong.py"), ok,
             ans("relu_hack.py"), ok,
             {"content": "I would write a kernel here, but I am not sure how."}, ok,
             {"status": 429, "headers": {"Retry-After": "1"}, "body": "{\"error\": {\"message\": \"rate limited\"}}"}, ok,
             dict(ok, delay_s=6), ok]
    srv = Standin(work, steps, "scenarios")
    out, db = os.path.join(work, "out"), os.path.join(work, "kiln.db")
    task = os.path.join(ROOT, "tests", "candidates", "tasks", "relu.py")
    p = generate(kiln, out, srv.url, db, "--task", task, "--samples", "6", "--turns", "3", "--llm-retries", "2")
    srv.stop()
    check(p.returncode == 0, f"scenarios: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    summary = json.load(open(os.path.join(out, "summary.json")))
    chains = summary["tasks"][0]["chains"]
    check([c["status"] for c in chains] == ["verified"] * 6, f"scenarios: statuses {chains}")
    check([c["best_turn"] for c in chains] == [2, 2, 2, 2, 1, 1], f"scenarios: best turns {chains}")
    lines = transcript(out)
    outcomes = {}
    for l in lines:
        if "outcome" in l:
            outcomes.setdefault(l["sample"], []).append(l["outcome"])
    want = {0: ["compile_error", "ok"], 1: ["mismatch", "ok"], 2: ["rejected", "ok"], 3: ["no_code", "ok"], 4: ["ok"], 5: ["ok"]}
    check(outcomes == want, f"scenarios: outcomes {outcomes}")
    attempts = {l["sample"]: l["llm"]["attempts"] for l in lines if "outcome" in l and l["sample"] in (4, 5)}
    check(attempts == {4: 2, 5: 2}, f"scenarios: the 429 and the hang each took one retry: {attempts}")
    check(os.path.exists(os.path.join(out, "tasks_relu.py")), "scenarios: the verified module is written")
    reqs = srv.requests()
    check(len(reqs) == 12, f"scenarios: {len(reqs)} requests, expected 12")
    for r in reqs:
        check(r["auth"] == f"Bearer {SECRET}", "scenarios: the key goes out as a bearer token")
        check(r["path"] == "/v1/chat/completions", f"scenarios: path {r['path']}")
    # The second turn of chains 0-3 carries the feedback on the first answer (golden).
    names = {0: "compile_error", 1: "mismatch", 2: "rejected", 3: "no_code"}
    for r in reqs:
        msgs, sample = r["request"]["messages"], r["request"]["seed"] - 1234
        if sample in names and len(msgs) == 4:
            check(msgs[0]["role"] == "system" and msgs[2]["role"] == "assistant", "scenarios: conversation roles")
            golden(names.pop(sample), msgs[3]["content"])
    check(not names, f"scenarios: no second turn seen for {names}")
    for root, _, files in os.walk(out):
        for f in files:
            check(SECRET not in open(os.path.join(root, f), errors="replace").read(), f"the key leaked into {f}")
    check(SECRET not in p.stdout + p.stderr, "the key leaked into kiln's output")
    return task, db, srv.port


def cache(kiln, work, task, db, port):
    srv = Standin(work, [], "cache", port)  # the same endpoint: the cache key holds it
    out = os.path.join(work, "out_cached")
    p = generate(kiln, out, srv.url, db, "--task", task, "--samples", "6", "--turns", "3", "--llm-retries", "0")
    srv.stop()
    check(p.returncode == 0, f"cache: exit {p.returncode}\n{p.stderr}")
    check(srv.requests() == [], f"cache: the server got {len(srv.requests())} requests")
    llm = json.load(open(os.path.join(out, "summary.json")))["llm"]
    check(llm["calls"] == 10 and llm["cached"] == 10 and llm["prompt_tokens"] == 0, f"cache: {llm}")


def resume(kiln, work):
    task = os.path.join(CORPUS, "model_ex_add.py")
    right = os.path.join(CORPUS, "model_new_ex_add_triton.py")
    wrong = os.path.join(work, "add_wrong.py")
    with open(wrong, "w") as f:
        f.write(open(right).read().replace("out = x + y", "out = x - y"))
    db, out = os.path.join(work, "resume.db"), os.path.join(work, "out_resume")
    srv = Standin(work, [{"file": wrong}, {"status": 500, "body": "upstream down"}], "resume1")
    p = generate(kiln, out, srv.url, db, "--task", task, "--turns", "3", "--llm-retries", "0")
    srv.stop()
    check(p.returncode == 1, f"resume: the first run exits 1 ({p.returncode})\n{p.stderr}")
    check("--resume" in p.stderr, "resume: the first run says how to continue")
    check(not os.path.exists(os.path.join(out, "examples_model_ex_add.py")), "resume: no module after a failure")
    p = generate(kiln, out, srv.url, db, "--task", task)
    check(p.returncode == 2 and "--resume" in p.stderr, f"resume: an existing transcript needs --resume ({p.returncode})")
    srv = Standin(work, [{"file": right}], "resume2")
    p = generate(kiln, out, srv.url, db, "--task", task, "--turns", "3", "--resume")
    srv.stop()
    check(p.returncode == 0, f"resume: the resumed run exits 0 ({p.returncode})\n{p.stdout}\n{p.stderr}")
    reqs = srv.requests()
    check(len(reqs) == 1 and len(reqs[0]["request"]["messages"]) == 4, "resume: one call with the whole conversation")
    if reqs:
        check("(mismatch)" in reqs[0]["request"]["messages"][3]["content"], "resume: the feedback on turn 1 is resent")
    turns = [l["turn"] for l in transcript(out) if "outcome" in l]
    check(turns == [1, 2], f"resume: transcript turns {turns}")
    check(os.path.exists(os.path.join(out, "examples_model_ex_add.py")), "resume: the module is written")


def exhausted(kiln, work, task):
    wrong = ans("relu_wrong.py")
    srv = Standin(work, [wrong, dict(wrong, plan="Another try.")], "exhausted")
    out = os.path.join(work, "out_exhausted")
    p = generate(kiln, out, srv.url, os.path.join(work, "kiln.db"), "--task", task, "--turns", "2", "--llm-retries", "0")
    srv.stop()
    check(p.returncode == 1, f"exhausted: exit {p.returncode}")
    check(json.load(open(os.path.join(out, "summary.json")))["tasks"][0]["status"] == "failed", "exhausted: status")
    check(not os.path.exists(os.path.join(out, "tasks_relu.py")), "exhausted: no module")


def usage_errors(kiln, work):
    task = os.path.join(ROOT, "tests", "candidates", "tasks", "relu.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_LLM_")}
    run = lambda *a: subprocess.run([kiln, "generate", "--out", os.path.join(work, "usage")] + list(a),
                                    capture_output=True, text=True, env=env, cwd=ROOT)
    p = run("--task", task)
    check(p.returncode == 2 and "no model endpoint: give --llm-url or set KILN_LLM_URL" in p.stderr, f"no endpoint: {p.stderr}")
    tmpl = os.path.join(work, "bad_template.txt")
    with open(tmpl, "w") as f:
        f.write("=== user ===\nWrite {{task_name}}\nfrom {{referense}}\n")
    p = run("--task", task, "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--prompt-template", tmpl)
    check(p.returncode == 2 and f"{tmpl}:3:6: error: unknown placeholder '{{{{referense}}}}'" in p.stderr,
          f"bad template: {p.stderr}")
    p = run("--task", os.path.join(work, "missing.py"), "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m")
    check(p.returncode == 2 and "missing.py" in p.stderr, f"missing task: {p.stderr}")
    p = run("--task", task, "--llm-url", "ftp://x/v1", "--llm-model", "m")
    check(p.returncode == 2 and "scheme must be http or https" in p.stderr, f"bad url: {p.stderr}")


def https(kiln, work):
    """TLS: an untrusted certificate fails the call (no retry); trusted (SSL_CERT_FILE), the answer arrives."""
    if not shutil.which("openssl"):
        print("note: no openssl - the https scenario is skipped")
        return
    key, cert, both = (os.path.join(work, n) for n in ("key.pem", "cert.pem", "both.pem"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    with open(both, "w") as f:
        f.write(open(cert).read() + open(key).read())
    srv = Standin(work, [{"content": "no code, over TLS"}], "https", cert=both)
    task = os.path.join(ROOT, "tests", "candidates", "tasks", "relu.py")
    p = generate(kiln, os.path.join(work, "out_tls1"), srv.url, os.path.join(work, "tls.db"), "--task", task, "--turns", "1")
    check(p.returncode == 1 and "SSLServerVerification" in open(os.path.join(work, "out_tls1", "transcript.jsonl")).read(),
          f"https: an untrusted certificate fails ({p.returncode})")
    os.environ["SSL_CERT_FILE"] = cert
    try:
        p = generate(kiln, os.path.join(work, "out_tls2"), srv.url, os.path.join(work, "tls.db"), "--task", task, "--turns", "1")
    finally:
        del os.environ["SSL_CERT_FILE"]
    srv.stop()
    lines = transcript(os.path.join(work, "out_tls2"))
    check(p.returncode == 1 and lines[0].get("outcome") == "no_code", f"https: the answer arrives over TLS: {lines}")
    check(len(srv.requests()) == 1, "https: one request reached the server")


def run(kiln, work):
    usage_errors(kiln, work)
    https(kiln, work)
    task, db, port = scenarios(kiln, work)
    cache(kiln, work, task, db, port)
    exhausted(kiln, work, task)
    if os.path.isdir(CORPUS):
        resume(kiln, work)
    else:
        print("note: no corpus at", CORPUS, "- the resume scenario is skipped")


if __name__ == "__main__":
    sys.exit(lib.main("kiln_generate_test_", run))
