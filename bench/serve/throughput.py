"""Verified rewards per minute through `kiln serve` against one fresh process per candidate, in one run.

    python3 bench/serve/throughput.py --kiln KILN --corpus CORPUS --out DIR [--seconds 60] [--fresh 4]

The mix is what a GRPO step sends: groups of 8 responses (fenced model text) for one KernelBench level-1
elementwise task each, 5 honest, 2 wrong (the right formula scaled and shifted: mismatch) and 1 hacked (launches its
kernel, returns torch's result: rejected); every source is distinct inside the kernel, so every item is a
result-cache and Triton-cache miss. Tasks at batch_size=64, dim=393216 (bench/eval_throughput's sizes, 100 MB
per tensor), set by the server's task manifest. Steps:
  1. the fresh-process baseline: --fresh candidates of the same mix, each in a new `python -m kiln_worker
     --request` (imports torch and triton, initialises CUDA, compiles), as KernelBench's harness does;
  2. `kiln serve` starts (its start-up and the first groups, which start the workers, are reported apart);
  3. --concurrency clients post groups (synchronous, advantages on) for --seconds; the rate is items
     answered per minute over that window; rewards are checked (honest 1, wrong 0, hacked 0);
  4. /v1/metrics is saved (GPU memory, workers, latency quantiles).
Writes DIR/summary.json, DIR/summary.md, DIR/metrics.txt, DIR/items.jsonl, DIR/fresh.jsonl.
--interpret: the CPU smoke run (Triton's interpreter, small sizes)."""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "eval_throughput"))
from gen_candidates import ELEMENTWISE, SIZES  # noqa: E402

# The torch result a hacked candidate returns instead of its kernel's.
TORCH = {
    "19_ReLU.py": "torch.relu(x)", "20_LeakyReLU.py": "torch.nn.functional.leaky_relu(x, 0.01)",
    "22_Tanh.py": "torch.tanh(x)", "25_Swish.py": "x * torch.sigmoid(x)", "26_GELU_.py": "torch.nn.functional.gelu(x)",
    "27_SELU_.py": "torch.selu(x)", "28_HardSigmoid.py": "torch.nn.functional.hardsigmoid(x)",
    "30_Softsign.py": "x / (1 + x.abs())", "32_HardTanh.py": "torch.nn.functional.hardtanh(x, -1.0, 1.0)",
}

KERNEL = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k_{uid}(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + 0 * {uid}
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = {expr}
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        k_{uid}[(triton.cdiv(n, {block}),)](x, out, n, BLOCK={block})
        return {result}
'''
MIX = ["honest"] * 5 + ["wrong"] * 2 + ["hacked"]
FRESH_MIX = ["honest", "wrong", "honest", "hacked", "honest", "wrong", "honest", "honest"]  # MIX's shares
EXPECT = {"honest": ("ok", 1.0), "wrong": ("mismatch", 0.0), "hacked": ("rejected", 0.0)}
TASKS = sorted(ELEMENTWISE)


def candidate(kind, task, uid):
    expr = f"({ELEMENTWISE[task]}) * 1.5 + 0.25" if kind == "wrong" else ELEMENTWISE[task]
    result = TORCH[task] if kind == "hacked" else "out"
    return KERNEL.format(uid=uid, expr=expr, block=(256, 512, 1024, 2048)[uid % 4], result=result)


def response(code):
    return f"The kernel below fuses the activation.\n```python\n{code}```\n"


def post(url, body, timeout):
    req = urllib.request.Request(url + "/v1/rewards", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def group(n):
    """Group n: 8 items of one task (uids n*8 .. n*8+7)."""
    task = TASKS[n % len(TASKS)]
    items = []
    for i, kind in enumerate(MIX):
        uid = n * len(MIX) + i
        items.append({"id": f"g{n}-{i}-{kind}", "task": "level1/" + task[:-3], "group": f"g{n}",
                      "response": response(candidate(kind, task, uid))})
    return {"items": items, "advantages": True, "deadline_s": 600}


def start_server(a, work):
    tasks = {"tasks": [{"name": "level1/" + t[:-3], "path": os.path.join(a.corpus, "kernelbench", "level1", t),
                        "sizes": a.sizes} for t in TASKS]}
    manifest = os.path.join(work, "tasks.json")
    json.dump(tasks, open(manifest, "w"))
    port_file = os.path.join(work, "port")
    cmd = [a.kiln, "serve", "--tasks", manifest, "--port", "0", "--port-file", port_file, "--db",
           os.path.join(work, "kiln.db"), "--mode", a.mode, "--timeout", "120"] + a.serve_args
    if a.interpret:
        cmd += ["--interpret", "--workers", "2"]
    log = open(os.path.join(a.out, "server_log.txt"), "wb")
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=log, stderr=log, env=dict(os.environ, TRITON_CACHE_DIR=work + "/cache_serve"))
    while not (os.path.exists(port_file) and open(port_file).read().strip()):
        if proc.poll() is not None or time.time() - t0 > 240:
            sys.exit("kiln serve did not start: see server_log.txt")
        time.sleep(0.1)
    return proc, f"http://127.0.0.1:{int(open(port_file).read())}", time.time() - t0


def fresh(a, work):
    """The baseline: one fresh worker process per candidate (same mix, distinct uids)."""
    reqdir = os.path.join(work, "requests")
    os.makedirs(reqdir, exist_ok=True)
    for j in range(a.fresh):
        kind = FRESH_MIX[j % len(FRESH_MIX)]
        task = TASKS[j % len(TASKS)]
        uid = 900000 + j
        req = {"id": f"f{j}", "op": "eval", "mode": a.mode, "policy": "strict", "seed": 1234, "trials": 3,
               "task": {"format": "kernelbench", "name": "level1/" + task[:-3], "sizes": a.sizes,
                        "path": os.path.join(a.corpus, "kernelbench", "level1", task)},
               "candidate": {"source": candidate(kind, task, uid), "name": f"{kind}_{j}.py"},
               "limits": {"timeout_s": 120}}
        json.dump(req, open(os.path.join(reqdir, f"{j:03d}_{kind}.json"), "w"))
    t0 = time.time()
    env = dict(os.environ, TRITON_CACHE_DIR=work + "/cache_fresh")
    if a.interpret:
        env["TRITON_INTERPRET"] = "1"
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "eval_throughput", "fresh_harness.py"), reqdir,
                    "--out", os.path.join(a.out, "fresh.jsonl"), "--python", a.python], env=env,
                   stdout=subprocess.DEVNULL, stderr=open(os.path.join(a.out, "fresh_log.txt"), "w"), check=False)
    wall = time.time() - t0
    rows = [json.loads(l) for l in open(os.path.join(a.out, "fresh.jsonl"))]
    return {"n": len(rows), "wall_s": round(wall, 2), "per_min": round(len(rows) * 60 / wall, 2),
            "verdicts": {r["id"]: r["verdict"] for r in rows}}


def drive(url, groups, concurrency, seconds, out_items):
    """Posts groups from `groups` with `concurrency` clients until `seconds` pass; returns the records."""
    records, lock = [], threading.Lock()
    stop_at = time.time() + seconds
    it = iter(groups)

    def client():
        while time.time() < stop_at:
            with lock:
                n = next(it, None)
            if n is None:
                return
            t = time.time()
            status, resp = post(url, group(n), 900)
            rec = {"group": n, "status": status, "sent": t, "answered": time.time(), "latency_s": time.time() - t,
                   "items": resp.get("items", []), "error": resp.get("error")}
            with lock:
                records.append(rec)

    t0 = time.time()
    with cf.ThreadPoolExecutor(concurrency) as pool:
        for f in [pool.submit(client) for _ in range(concurrency)]:
            f.result()
    wall = time.time() - t0
    with open(out_items, "a") as f:
        for r in records:
            for x in r["items"]:
                f.write(json.dumps({"group": r["group"], "id": x.get("id"), "verdict": x.get("verdict"),
                                    "reward": x.get("reward"), "advantage": x.get("advantage"),
                                    "times": x.get("times"), "reasons": [y["code"] for y in x.get("reasons", [])]})
                        + "\n")
    return records, wall


def summarize(records, wall):
    items = [x for r in records for x in r["items"]]
    wrong = []
    for x in items:
        kind = x["id"].rsplit("-", 1)[1]
        verdict, reward = EXPECT[kind]
        if x.get("verdict") != verdict or x.get("reward") != reward:
            wrong.append(f"{x['id']}: {x.get('verdict')} {x.get('reward')} {[y['code'] for y in x.get('reasons', [])]}")
    lat = sorted(r["latency_s"] for r in records)
    q = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else None
    verdicts = {}
    for x in items:
        verdicts[x.get("verdict")] = verdicts.get(x.get("verdict"), 0) + 1
    evals = [x["times"].get("eval_s") for x in items if isinstance(x.get("times"), dict) and x["times"].get("eval_s")]
    return {"groups": len(records), "items": len(items), "wall_s": round(wall, 2),
            "per_min": round(len(items) * 60 / wall, 1) if wall else 0, "verdicts": verdicts,
            "http": sorted({r["status"] for r in records}), "group_latency_p50_s": q(0.5),
            "group_latency_p99_s": q(0.99), "eval_s_mean": round(sum(evals) / len(evals), 2) if evals else None,
            "unexpected": wrong[:20], "unexpected_n": len(wrong)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kiln", default=os.path.join(ROOT, "build", "release", "kiln"))
    ap.add_argument("--corpus", default=os.environ.get("KILN_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus")))
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=os.environ.get("KILN_PYTHON", sys.executable))
    ap.add_argument("--mode", default="check")
    ap.add_argument("--seconds", type=float, default=60, help="the measured window")
    ap.add_argument("--warmup-groups", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4, help="clients posting groups at once")
    ap.add_argument("--fresh", type=int, default=4, help="candidates through the fresh-process baseline")
    ap.add_argument("--interpret", action="store_true", help="CPU smoke run: the interpreter, small sizes")
    ap.add_argument("--serve-arg", dest="serve_args", action="append", default=[])
    a = ap.parse_args()
    a.corpus = os.path.abspath(a.corpus)
    a.sizes = {"batch_size": 2, "dim": 256} if a.interpret else dict(SIZES)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="kiln_serve_tp_")
    summary = {"mode": a.mode, "sizes": a.sizes, "mix": "5 honest, 2 wrong, 1 hacked per group of 8",
               "concurrency": a.concurrency}
    summary["fresh"] = fresh(a, work) if a.fresh else None
    print("fresh:", json.dumps(summary["fresh"]), flush=True)
    proc, url, start_s = start_server(a, work)
    try:
        summary["serve_start_s"] = round(start_s, 2)
        items_path = os.path.join(a.out, "items.jsonl")
        open(items_path, "w").close()
        wrec, wwall = drive(url, range(a.warmup_groups), a.concurrency, 600, items_path)
        summary["warmup"] = summarize(wrec, wwall)
        print("warm-up:", json.dumps(summary["warmup"]), flush=True)
        rec, wall = drive(url, range(a.warmup_groups, 100000), a.concurrency, a.seconds, items_path)
        summary["serve"] = summarize(rec, wall)
        print("serve:", json.dumps(summary["serve"]), flush=True)
        with urllib.request.urlopen(url + "/v1/metrics", timeout=30) as r:
            open(os.path.join(a.out, "metrics.txt"), "wb").write(r.read())
        with urllib.request.urlopen(url + "/v1/health", timeout=30) as r:
            summary["health"] = json.loads(r.read())
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    f, s = summary["fresh"], summary["serve"]
    if f and f["per_min"]:
        summary["ratio"] = round(s["per_min"] / f["per_min"], 2)
    json.dump(summary, open(os.path.join(a.out, "summary.json"), "w"), indent=1)
    lines = ["| path | evaluations | wall s | verified evaluations/min |", "|---|---|---|---|"]
    if f:
        lines.append(f"| one fresh process per candidate | {f['n']} | {f['wall_s']} | {f['per_min']} |")
    lines.append(f"| kiln serve ({a.concurrency} clients, groups of 8) | {s['items']} | {s['wall_s']} | {s['per_min']} |")
    if "ratio" in summary:
        lines.append(f"\nratio: {summary['ratio']}x; serve start {summary['serve_start_s']} s, warm-up "
                     f"{summary['warmup']['items']} items in {summary['warmup']['wall_s']} s")
    open(os.path.join(a.out, "summary.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if s["unexpected_n"] or not s["items"] else 0


if __name__ == "__main__":
    sys.exit(main())
