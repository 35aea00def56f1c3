#!/usr/bin/env python3
"""End-to-end test of `kiln optimize --llm` continuing the parametric search from the model's rewrite, on a
CPU: the real worker checks every candidate under Triton's interpreter, and interp_timed_python.py gives the
ones that pass modelled times (from the BLOCK and num_warps written in them: fastest at 1024 and 4), so
kiln's timed path runs. Three conversations, two rounds, answered by the stand-in server:

  round 1   sample 0: a rewrite that does not compile (the interpreter's error)
            sample 1: a correct online softmax in chunks of 16 (slower than the original: it loses)
            sample 2: the same online softmax in chunks of 128 (faster: it wins verification)
  round 2   each is told how its proposal fared and the fastest module so far (golden); it answers
            without code (sample 0) or with the same module again

The winning rewrite is analysed and searched over its own tunables: the final module carries the model's
change (the online softmax) and a searched value (BLOCK=1024, 4 warps). The report text is golden
(golden_e2e/optimize_tuned_report.txt, times and wall seconds masked; KILN_UPDATE_GOLDEN=1 rewrites it), the
JSON says which win came from the model and which from the search on its rewrite, and the written module
passes `kiln eval` under the interpreter. usage: optimize_llm_tuned_test.py KILN (exit 77 without
torch/triton).
"""
import json
import os
import re
import subprocess
import sys

import e2e_lib as g

MARK = "Online softmax: the running maximum and the rescaled sum in one pass"


def run(kiln, work):
    none = {"content": "I have nothing better to propose."}
    steps = [g.ans("softmax_compile_error.py"), g.ans("softmax_online_small.py"), g.ans("softmax_online.py"),
             none, g.ans("softmax_online_small.py"), g.ans("softmax_online.py")]
    srv = g.Standin(work, steps, "optimize_tuned")
    ex = os.path.join(g.ROOT, "examples", "softmax")
    out = os.path.join(work, "out.py")
    cmd = [kiln, "optimize", os.path.join(ex, "softmax.py"), "--bench", os.path.join(ex, "bench.py"), "--entry", "softmax",
           "--python", os.path.join(g.HERE, "interp_timed_python.py"), "--no-profile", "--compile-jobs", "0",
           "--strategy", "coordinate", "-q", "--db", os.path.join(work, "kiln.db"),
           "--json", os.path.join(work, "report.json"), "--out", out, "--llm", "--llm-url", srv.url,
           "--llm-model", "standin", "--llm-samples", "3", "--llm-rounds", "2", "--llm-retries", "0",
           "--budget-seconds", "600"]
    env = dict(os.environ, INTERP_TIMED_PYTHON=g.PYTHON)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=g.ROOT, env=env)
    srv.stop()
    print(p.stdout[-4000:], p.stderr[-2000:])
    g.check(p.returncode == 0, f"exit {p.returncode}")
    rep = json.load(open(os.path.join(work, "report.json")))
    llm = [(c["id"], c["verdict"]) for c in rep["candidates"] if c["proposal"]]
    g.check([v for _, v in llm] == ["compile_error", "ok", "ok", "no_code", "ok", "ok"], f"proposals {llm}")
    g.check(rep["improved"] and rep["best_is_proposal"], "the tuned rewrite wins")
    ps = rep.get("proposal_search") or {}
    g.check(ps.get("proposal_id") == llm[2][0] and ps.get("improved"), f"proposal_search {ps}")
    g.check(ps.get("from_config", {}).get("BLOCK") == 128 and ps.get("best_config") == {"BLOCK": 1024, "num_stages": 3, "num_warps": 4},
            f"searched from the rewrite's values to the optimum: {ps.get('from_config')} -> {ps.get('best_config')}")
    g.check(rep["best_origin"] == f"coordinate on llm #{llm[2][0]}", f"best_origin {rep['best_origin']}")
    on = [c for c in rep["candidates"] if c.get("on_proposal") == llm[2][0]]
    g.check(len(on) >= 3 and sum(c["final_outcome"] == "won" for c in on) == 1, "the search on the rewrite is listed")
    g.check(not any(c["origin"] == "coordinate" for c in rep["candidates"]), "the original's own search did not run")
    outcomes = {c["id"]: c["final_outcome"] for c in rep["candidates"] if c["proposal"]}
    g.check(outcomes[llm[2][0]] == "won" and outcomes[llm[1][0]] == "", f"the slow rewrite lost: {outcomes}")
    src = open(out).read() if os.path.exists(out) else ""
    g.check(MARK in src and "BLOCK=1024, num_warps=4" in src, "the final module: the model's change and searched values")
    report = re.sub(r"wall \d+\.\d s", "wall X s", p.stdout)
    report = re.sub(r"(?m)^time: .*$", "time: X", report)  # where the time went (seconds vary)
    report = report.replace(work, "WORK")
    g.golden("optimize_tuned_report", report.rstrip("\n"))
    reqs = srv.requests()
    g.check(len(reqs) == 6, f"{len(reqs)} requests, expected 6")
    if len(reqs) == 6:
        g.golden("optimize_tuned_round2_slow", reqs[4]["request"]["messages"][-1]["content"])
    ev = subprocess.run([kiln, "eval", "--task", os.path.join(ex, "softmax.py"), "--bench", os.path.join(ex, "bench.py"),
                         "--entry", "softmax", "--candidate", out, "--interpret", "--no-db"],
                        capture_output=True, text=True, cwd=g.ROOT)
    g.check(ev.returncode == 0 and "verdict: ok" in ev.stdout, f"the written module passes kiln eval: {ev.stdout[-500:]}")


if __name__ == "__main__":
    sys.exit(g.main("kiln_optimize_llm_tuned_test_", run))
