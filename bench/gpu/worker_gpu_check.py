#!/usr/bin/env python3
"""GPU self-check of the worker's compiled path. Run by bench/gpu/worker_gpu_check.sh on a GPU host.

Exercises: launch-hook counting and compile facts, timing (CUDA graph for short kernels, cold-L2 events for
long ones, interleaved rounds, clocks), fork isolation with CUDA (illegal memory access -> verdict and the next
request still works), shared memory over the limit, a kernel that never ends -> timeout, shared isolation's
exit-after-fatal, one-shot profile mode, device_peaks, timing repeatability (5 timings of one candidate), and
every committed candidate. Writes to $OUT (or --out):
  worker_transcripts.jsonl   {"request", "response"} per line, for ReplayRunner tests
  worker_gpu_check.txt       PASS/FAIL lines and a summary
`--interpret` dry-runs the same script without a GPU (most checks then expect interpreter answers).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "worker"))
from workerproc import CANDIDATES, CORPUS, PYTHON, Worker, codes, eval_request, header, task_spec  # noqa: E402

results = []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--interpret", action="store_true")
    ap.add_argument("--quick", action="store_true", help="skip the candidate suites and peaks")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tr = open(os.path.join(a.out, "worker_transcripts.jsonl"), "w")
    report = open(os.path.join(a.out, "worker_gpu_check.txt"), "w")
    gpu = not a.interpret

    def log(msg):
        print(msg, flush=True)
        report.write(msg + "\n")
        report.flush()

    def check(name, cond, detail=""):
        results.append((name, bool(cond)))
        log(f"{'PASS' if cond else 'FAIL'} {name} {detail}"[:600])

    def req(w, r, timeout=300):
        t0 = time.monotonic()
        try:
            resp = w.request(r, timeout=timeout)
        except Exception as e:
            resp = {"ok": False, "error": f"no response: {e}"}
        r2 = dict(r)
        tr.write(json.dumps({"request": r2, "response": resp}) + "\n")
        tr.flush()
        resp["_wall_s"] = time.monotonic() - t0
        return resp

    w = Worker(isolation="fork", interpret=a.interpret)
    h = req(w, {"op": "hello"})
    log("hello: " + json.dumps(h)[:800])
    check("hello", h.get("ok") and h.get("interpreter") == (not gpu))

    # 1. honest relu: launch counting, compile facts, timing method, interleaving
    r = req(w, eval_request(os.path.join(CANDIDATES, "honest", "relu_ok.py"), mode="time"))
    k = (r.get("kernels") or [{}])[0]
    check("relu_ok verdict ok", r.get("verdict") == "ok", json.dumps(r.get("reasons")))
    check("launch hook counted launches", r.get("runtime_checks", {}).get("triton_launches", 0) >= 3)
    if gpu:
        check("compile facts", all(x in k for x in ("n_regs", "n_spills", "shared_bytes", "num_warps",
                                                   "num_stages", "grid", "constexprs")), json.dumps(k))
        c = (r.get("cases") or [{}])[0]
        check("short kernel timed with a CUDA graph", c.get("timing_method") == "cuda_graph", json.dumps(c)[:300])
        check("speedup and spread reported", "speedup" in c and "speedup_spread" in c)
        check("clocks recorded", (r.get("clocks") or {}).get("sm_mhz_before") is not None, json.dumps(r.get("clocks")))

    # 2. the kiln example at real sizes: a long kernel -> cold-L2 events
    spec = task_spec("kiln:examples/softmax")
    r = req(w, {"op": "eval", "task": spec, "candidate": None, "mode": "time", "seed": 1, "trials": 3,
                "limits": {"timeout_s": 300}})
    check("kiln softmax example ok", r.get("verdict") == "ok", json.dumps(r.get("reasons")))
    if gpu:
        methods = {c["name"]: c.get("timing_method") for c in r.get("cases", [])}
        check("long kernel timed with cold-L2 events", "events_cold_l2" in methods.values(), json.dumps(methods))
        log("softmax cases: " + json.dumps([{kk: c.get(kk) for kk in ("name", "candidate_ms", "reference_ms",
                                                                          "speedup", "timing_method")}
                                             for c in r.get("cases", [])]))

    # 3. KernelBench example and a bigger matmul (tf32 allowance)
    r = req(w, eval_request(os.path.join(CANDIDATES, "honest", "add_example_corpus.py"), mode="time"))
    check("kernelbench example ok", r.get("verdict") == "ok", json.dumps(r.get("reasons")))
    mm = eval_request(os.path.join(CANDIDATES, "honest", "matmul_ok.py"), mode="time")
    if gpu:
        mm["task"]["sizes"] = {"M": 1024, "K": 1024, "N": 1024}
    r = req(w, mm)
    check("matmul (tl.dot, fp32, tf32 allowance) ok", r.get("verdict") == "ok", json.dumps(r.get("reasons")))

    # 4. timing repeatability: the same candidate timed 5 times
    if gpu:
        meds = []
        for i in range(5):
            r = req(w, dict(mm, seed=100 + i))
            try:
                meds.append(r["cases"][0]["candidate_ms"]["median"])
            except Exception:
                pass
        if meds:
            spread = (max(meds) - min(meds)) / statistics.median(meds)
            check("timing repeatability (5 runs)", len(meds) == 5, f"medians={meds} spread={spread:.3f}")

    # 5. faults on the GPU: illegal memory access, shared memory, infinite kernel; the worker carries on
    for name, verdict, code in (("illegal_memory_access.py", "runtime_error" if gpu else "crash",
                                 "illegal_memory_access" if gpu else "signal"),
                                ("shared_memory_over_limit.py", "compile_error", "out_of_resources"),
                                ("infinite_kernel.py", "timeout", "timeout")):
        if not gpu and name == "shared_memory_over_limit.py":
            continue
        rq = eval_request(os.path.join(CANDIDATES, "faulty", name))
        r = req(w, rq, timeout=rq["limits"]["timeout_s"] + 60)
        check(f"{name}: {verdict} {code}", r.get("verdict") == verdict and code in codes(r),
              f"{r.get('verdict')} {json.dumps(r.get('reasons'))[:300]} wall={r['_wall_s']:.1f}s")
        r2 = req(w, eval_request(os.path.join(CANDIDATES, "honest", "relu_ok.py")))
        check(f"recovered after {name}", r2.get("verdict") == "ok")

    # 6. shared isolation: a fatal CUDA error answers, then the worker exits (status 3) for a restart
    if gpu:
        ws = Worker(isolation="shared", interpret=False)
        req(ws, {"op": "hello"})
        r = req(ws, eval_request(os.path.join(CANDIDATES, "faulty", "illegal_memory_access.py")))
        check("shared: illegal access answered with fatal", r.get("fatal") is True, json.dumps(r)[:300])
        try:
            rc = ws.proc.wait(timeout=30)
        except Exception:
            rc = None
        check("shared: worker exited with 3 after a fatal error", rc == 3, f"rc={rc}")
        ws.close()

    # 7. one-shot profile mode (what ncu runs)
    pr = {"id": "p", "op": "eval", "task": spec, "candidate": None, "mode": "profile", "profile_case": "small"}
    if not gpu:
        pr["profile_case"] = "tiny"
    pf = os.path.join(a.out, "profile_req.json")
    with open(pf, "w") as f:
        json.dump(pr, f)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "worker"))
    cmd = [PYTHON, "-m", "kiln_worker", "--request", pf, "--out", os.path.join(a.out, "profile_resp.json")]
    if not gpu:
        cmd.insert(3, "--interpret")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    try:
        resp = json.load(open(os.path.join(a.out, "profile_resp.json")))
    except Exception:
        resp = {}
    tr.write(json.dumps({"request": pr, "response": resp}) + "\n")
    check("one-shot profile", p.returncode == 0 and resp.get("verdict") == "ok"
          and resp["cases"][0].get("kernel_names") == ["softmax_kernel"], p.stderr[-300:])
    if gpu and subprocess.run(["which", "ncu"], capture_output=True).returncode == 0:
        p = subprocess.run(["ncu", "--nvtx", "--nvtx-include", "kiln_profile/", "--metrics",
                            "gpu__time_duration.sum", "--csv", PYTHON, "-m", "kiln_worker", "--request", pf,
                            "--out", os.path.join(a.out, "profile_resp_ncu.json")],
                           env=env, capture_output=True, text=True, timeout=600)
        with open(os.path.join(a.out, "ncu_profile.csv"), "w") as f:
            f.write(p.stdout)
        check("ncu selects the kiln_profile range", p.returncode == 0 and "softmax_kernel" in p.stdout,
              p.stderr[-300:])

    if not a.quick:
        # 8. device peaks
        r = req(w, {"op": "device_peaks", "dtypes": ["float32", "tf32", "bfloat16", "float16", "float8_e4m3fn"]},
                timeout=600)
        check("device_peaks", r.get("ok"), json.dumps(r)[:400])
        # 9. every committed candidate
        for suite in ("honest", "adversarial", "faulty"):
            for f in sorted(glob.glob(os.path.join(CANDIDATES, suite, "*.py"))):
                hd = header(f)
                exp = (hd.get("expect-gpu") if gpu and "expect-gpu" in hd else hd["expect"]).split()
                if hd.get("gpu-only") == "true" and not gpu:
                    continue
                rq = eval_request(f)
                r = req(w, rq, timeout=rq["limits"]["timeout_s"] + 120)
                ok = r.get("verdict") == exp[0] and (len(exp) < 2 or exp[1] in codes(r))
                check(f"{suite}/{os.path.basename(f)}: {' '.join(exp)}", ok,
                      f"got {r.get('verdict')} {codes(r)} in {r['_wall_s']:.1f}s")
        # 10. a few TritonBench-G modules against themselves with their perf sweeps, timed
        for name in ("softmax_triton1", "vector_addition", "matrix_transpose", "layer_norm_fwd"):
            path = os.path.join(CORPUS, "tritonbench", "G", "kernels", f"{name}.py")
            perf = os.path.join(CORPUS, "tritonbench", "G", "perf", f"{name}_perf.py")
            if not os.path.exists(path):
                continue
            sp = {"format": "tritonbench_g", "name": name, "path": path}
            if gpu and os.path.exists(perf):
                sp["perf_path"] = perf
            r = req(w, {"op": "eval", "task": sp, "candidate": None, "mode": "time" if gpu else "check",
                        "trials": 3, "cases": None, "limits": {"timeout_s": 600},
                        "timing": {"rounds": 3, "rep_ms": 50}}, timeout=900)
            check(f"tritonbench_g {name} self ok", r.get("verdict") == "ok",
                  f"{codes(r)} cases={len(r.get('cases') or [])}")
    w.close()
    n_fail = sum(1 for _, ok in results if not ok)
    log(f"summary: {len(results) - n_fail} passed, {n_fail} failed")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
