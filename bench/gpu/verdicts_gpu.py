#!/usr/bin/env python3
"""Issue 14 on a GPU: every honest and adversarial case of the corpus's KernelBench level-1 tasks at their real
sizes (19_ReLU, 1_Square_matrix_multiplication_, 24_LogSoftmax), and the committed candidates added for issue 14
on the compiled path (recorded as a transcript for tests/worker/test_gpu_replay.py).

    python3 bench/gpu/verdicts_gpu.py --out DIR [--phase suite|kb|all] [--interpret --small]

Writes DIR/verdicts_kb.jsonl (one line per case: verdict, reasons, expected, memory footprint and peak, the own
share), DIR/verdicts_summary.txt and DIR/verdicts_transcript.jsonl ({"request", "response"} lines, a hello
first). --small overrides the task sizes (a CPU dry run of the script under the interpreter)."""
import argparse
import json
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "worker"))
from workerproc import CANDIDATES, CORPUS, Worker, codes, eval_request, header  # noqa: E402

L1 = os.path.join(CORPUS, "kernelbench", "level1")
BENCH = os.path.join(ROOT, "bench", "verdicts")
ADV, HON = os.path.join(CANDIDATES, "adversarial"), os.path.join(CANDIDATES, "honest")

# task file -> [(candidate, trials)]: honest ones 3 trials, hacks 1 (rejection needs one)
KB = {
    "19_ReLU.py": [(f"{HON}/relu_ok.py", 3), (f"{ADV}/relu_mul_mask.py", 1), (f"{ADV}/aten_alias_runtime.py", 1),
                   (f"{ADV}/torch_compile_relu.py", 1), (f"{ADV}/numpy_host_relu.py", 1)],
    "1_Square_matrix_multiplication_.py": [
        (f"{HON}/matmul_ok.py", 3), (f"{HON}/matmul_padded_ok.py", 3), (f"{ADV}/einsum_gemm.py", 1),
        (f"{ADV}/reshaped_view_matmul.py", 1), (f"{ADV}/torch_does_work.py", 1), (f"{ADV}/bf16_dot_fp32.py", 1),
        (f"{ADV}/tf32_dot_fp32.py", 1), (f"{ADV}/fp16_dot_fp32.py", 1)],
    "24_LogSoftmax.py": [(f"{BENCH}/logsoftmax_ok.py", 3), (f"{BENCH}/logsoftmax_decomposed.py", 1),
                         (f"{BENCH}/logsoftmax_partial.py", 1)],
}
SMALL = {"19_ReLU.py": {"batch_size": 4, "dim": 512}, "1_Square_matrix_multiplication_.py": {"N": 64},
         "24_LogSoftmax.py": {"batch_size": 4, "dim": 5000}}
SUITE = ["relu_mul_mask", "einsum_gemm", "softmax_decomposed", "aten_alias_runtime", "partial_triton_rowmax",
         "numpy_host_relu", "tolist_loop", "torch_compile_relu", "reshaped_view_matmul", "where_relu",
         "bf16_dot_fp32", "tf32_dot_fp32", "fp16_dot_fp32"]
SUITE_HONEST = ["matmul_ok", "matmul_padded_ok", "softmax_rows_ok", "relu_views_ok"]


class Recorder:
    def __init__(self, worker, path):
        self.w, self.f = worker, open(path, "a")

    def request(self, req, timeout):
        resp = self.w.request(req, timeout=timeout)
        self.f.write(json.dumps({"request": req, "response": resp}) + "\n")
        self.f.flush()
        return resp


def expected(path):
    h = header(path)
    return (h.get("expect-gpu") or h["expect"]).partition(" ")[::2]


def run_suite(rec, out):
    for name, suite in [(n, ADV) for n in SUITE] + [(n, HON) for n in SUITE_HONEST]:
        path = os.path.join(suite, name + ".py")
        req = eval_request(path)
        t0 = time.monotonic()
        r = rec.request(req, timeout=req["limits"]["timeout_s"] + 120)
        v, code = expected(path)
        good = r.get("verdict") == v and (not code or code in codes(r))
        print(f"suite {name:24s} {r.get('verdict')} {codes(r)} expect {v} {code} {'PASS' if good else 'FAIL'} "
              f"{time.monotonic() - t0:.1f}s", file=out, flush=True)


def run_kb(rec, out, small, jsonl, only=None):
    for task, cands in KB.items():
        for cand, trials in cands:
            if only and f"{task[:-3]}:{os.path.basename(cand)}" not in only:
                continue
            req = eval_request(cand, trials=trials)
            req["task"] = {"format": "kernelbench", "name": task[:-3], "path": os.path.join(L1, task)}
            if small:
                req["task"]["sizes"] = SMALL[task]
            req["limits"]["timeout_s"] = 400
            t0 = time.monotonic()
            try:
                r = rec.request(req, timeout=520)
            except Exception as e:  # noqa: BLE001 - recorded as the case's outcome
                r = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            v, code = expected(cand)
            mem = r.get("memory") or {}
            att = r.get("attribution") or {}
            row = {"task": task, "candidate": os.path.basename(cand), "trials": trials, "verdict": r.get("verdict"),
                   "codes": codes(r), "expect": [v, code], "message": (r.get("message") or r.get("error") or "")[:300],
                   "memory": mem, "own_share": att.get("own_share"), "attribution_method": att.get("method"),
                   "foreign_kernels": att.get("foreign_kernels"), "precision": r.get("precision"),
                   "elapsed_s": round(time.monotonic() - t0, 1), "device": (r.get("device") or {}).get("name")}
            row["pass"] = r.get("verdict") == v and (not code or code in row["codes"])
            jsonl.write(json.dumps(row) + "\n")
            jsonl.flush()
            ratio = mem.get("ratio")
            print(f"kb {task[:-3]:34s} {row['candidate']:26s} {row['verdict']} {row['codes']} "
                  f"{'PASS' if row['pass'] else 'FAIL'} footprint {mem.get('footprint_bytes')} peak "
                  f"{mem.get('peak_bytes')} ratio {ratio} own {row['own_share']} {row['elapsed_s']}s",
                  file=out, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--phase", default="all", choices=["suite", "kb", "all"])
    ap.add_argument("--interpret", action="store_true")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--only", default="", help="TASK:CANDIDATE.py,... (e.g. 19_ReLU:relu_ok.py): only these cases")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    w = Worker(isolation="fork", interpret=a.interpret)
    rec = Recorder(w, os.path.join(a.out, "verdicts_transcript.jsonl"))
    out = open(os.path.join(a.out, "verdicts_summary.txt"), "a")
    tee = type("Tee", (), {"write": lambda s, x: (out.write(x), sys.stdout.write(x)),
                           "flush": lambda s: (out.flush(), sys.stdout.flush())})()
    try:
        rec.request({"op": "hello"}, timeout=300)
        if a.phase in ("suite", "all"):
            run_suite(rec, tee)
        if a.phase in ("kb", "all"):
            with open(os.path.join(a.out, "verdicts_kb.jsonl"), "a") as jsonl:
                run_kb(rec, tee, a.small, jsonl, set(filter(None, a.only.split(","))))
    finally:
        w.close()


if __name__ == "__main__":
    main()
