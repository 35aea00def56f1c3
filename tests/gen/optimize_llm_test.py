#!/usr/bin/env python3
"""End-to-end test of `kiln optimize --llm` on a CPU: a dry run (Triton's interpreter: correctness only) of
examples/softmax with two conversations of two rounds answered by the stand-in server (standin_server.py).

  round 1   sample 0: a rewrite that does not compile; sample 1: a correct one-pass rewrite
  round 2   sample 0 (told the compile error): an answer without code; sample 1 (told it was correct):
            a rewrite where torch computes the softmax (rejected: proposals run under policy strict)

The run ends as a dry run (nothing wins untimed) with the four proposals in its report, origin "llm", and
their verdicts; the round-2 prompts carry the feedback (golden: golden_e2e/optimize_*.txt; KILN_UPDATE_GOLDEN=1
rewrites them); the first prompt carries the module and the original's diagnosis field. usage:
optimize_llm_test.py KILN (exit 77 without torch/triton).
"""
import json
import os
import subprocess
import sys

import e2e_lib as g


def run(kiln, work):
    steps = [g.ans("softmax_compile_error.py"), g.ans("softmax_one_pass.py"),
             {"content": "The kernel is already optimal; I would not change it."}, g.ans("softmax_torch.py")]
    srv = g.Standin(work, steps, "optimize")
    ex = os.path.join(g.ROOT, "examples", "softmax")
    cmd = [kiln, "optimize", os.path.join(ex, "softmax.py"), "--bench", os.path.join(ex, "bench.py"), "--entry", "softmax",
           "--dry-run", "--interpret", "-q", "--db", os.path.join(work, "kiln.db"), "--json", os.path.join(work, "report.json"),
           "--out", os.path.join(work, "out.py"), "--llm", "--llm-url", srv.url, "--llm-model", "standin",
           "--llm-samples", "2", "--llm-rounds", "2", "--llm-retries", "0", "--budget-seconds", "300"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=g.ROOT)
    srv.stop()
    print(p.stdout[-3000:], p.stderr[-2000:])
    g.check(p.returncode == 0, f"exit {p.returncode}")
    rep = json.load(open(os.path.join(work, "report.json")))
    llm = [(c["origin"], c["verdict"]) for c in rep["candidates"] if c["origin"] == "llm"]
    g.check(llm == [("llm", "compile_error"), ("llm", "ok"), ("llm", "no_code"), ("llm", "rejected")], f"proposals {llm}")
    g.check(not rep["improved"] and rep["mode"] == "dry-run", "a dry run keeps the original")
    g.check(p.stdout.count("[llm proposal: a whole module]") == 4, "the report lists the proposals")
    reqs = srv.requests()
    g.check(len(reqs) == 4, f"{len(reqs)} requests, expected 4")
    if len(reqs) == 4:
        first = reqs[0]["request"]["messages"]
        g.check("softmax_kernel" in first[1]["content"] and "no profile was taken" in first[1]["content"],
                "the first prompt carries the module and the diagnosis field")
        g.check([r["request"]["seed"] for r in reqs] == [1234, 1235, 1234, 1235], "two conversations, two rounds")
        g.golden("optimize_compile_error", reqs[2]["request"]["messages"][-1]["content"])
        g.golden("optimize_correct", reqs[3]["request"]["messages"][-1]["content"])
        g.check(len(reqs[3]["request"]["messages"]) == 4, "round 2 carries the conversation")


if __name__ == "__main__":
    sys.exit(g.main("kiln_optimize_llm_test_", run))
