#!/usr/bin/env python3
"""`kiln datagen` passes each program's captured GPU peak to its verification (issue 19; docs/datagen.md,
"Verification"): through the real datagen verify path (conversion of the recorded captures, kiln eval's batch with
3 check workers sharing one fake GPU of 10 GiB, fake_gpu_memory_python.py), two programs whose captures peaked at
6 GiB are verified alone on their first try (their pairs' memory hint, 7.75 GiB, is more than half of the 9 GiB
the check workers may share): no out-of-memory answer, no retry, nothing else running beside them. Without the
hint their first checks were admitted at 0 bytes beside the others. With --llm (the stand-in server of the generate
tests), the model's candidate for a captured program carries the capture's hint too, scaled with the batch size.
Needs no torch (the fake answers).

usage: datagen_memory_test.py KILN
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time

from datagen_harness import check, failures, lines

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_gpu_memory_python.py")
STANDIN = os.path.join(HERE, "..", "gen", "standin_server.py")
GiB, MiB = 1 << 30, 1 << 20
BIG = {"comp_5_00000", "comp_5_00001"}
def hint(peak):
    return math.ceil(1.25 * peak) + 256 * MiB  # src/app/datagen_internal.h: kVerifyPeakFactor, kVerifyPeakFixed


def warnings(res):
    return [w.get("message", "") for w in (res.get("result") or {}).get("warnings", [])]


def fake_gpu_env(tmp, peaks):
    inflight, log = os.path.join(tmp, "inflight"), os.path.join(tmp, "gpu.log")
    os.makedirs(inflight)
    env = dict(os.environ, FAKE_GPU_MEM_BYTES=str(10 * GiB), FAKE_GPU_PEAKS=json.dumps(peaks),
               FAKE_GPU_INFLIGHT=inflight, FAKE_GPU_LOG=log)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env, log


def llm_route(kiln, tmp):
    """--llm beside the compiler route: the model's candidate for a captured program gets the capture's hint too,
    scaled with the batch size at the other shape it is verified at (comp_5_00001: batch_size 2, then 3)."""
    tmp = os.path.join(tmp, "llm")
    progs = os.path.join(tmp, "programs")
    os.makedirs(progs)
    os.symlink(os.path.join(HERE, "programs", "comp_5_00001.py"), os.path.join(progs, "comp_5_00001.py"))
    peak = 6 * GiB
    caps = os.path.join(tmp, "captures.jsonl")
    with open(caps, "w") as f:
        c = next(c for c in lines(os.path.join(HERE, "captures.jsonl")) if c["id"] == "comp_5_00001")
        f.write(json.dumps(dict(c, gpu_peak_bytes=peak)) + "\n")
    env, _ = fake_gpu_env(tmp, {"comp_5_00001": peak})
    workdir = os.path.join(tmp, "standin")
    os.makedirs(workdir)
    with open(os.path.join(workdir, "script.json"), "w") as f:
        json.dump({"steps": [{"file": os.path.join(HERE, "llm_answers", "l2norm_clamp_ok.py"), "plan": "Step 1."}],
                   "idle_exit_s": 120, "max_lifetime_s": 300}, f)
    port_file = os.path.join(workdir, "port")
    server = subprocess.Popen([sys.executable, STANDIN, os.path.join(workdir, "script.json"), port_file,
                               os.path.join(workdir, "requests.jsonl")])
    try:
        deadline = time.time() + 60
        while not os.path.exists(port_file) and time.time() < deadline:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{int(open(port_file).read())}/v1"
        out = os.path.join(tmp, "run")
        r = subprocess.run([kiln, "datagen", "--out", out, "--from", progs, "--captures", caps, "--python", FAKE,
                            "--llm", "--llm-url", url, "--llm-model", "standin", "--llm-retries", "0",
                            "--check-workers", "3", "--trials", "1", "--no-db", "--allow-benchmark", "--quiet"],
                           capture_output=True, text=True, timeout=300, env=env)
    finally:
        server.terminate()
        server.wait(10)
    check(r.returncode == 0, f"datagen --llm exits 0 (got {r.returncode}: {r.stderr[-600:]})")
    pairs = {p["id"]: p.get("memory_hint_bytes") for p in lines(os.path.join(out, "verify_llm_pairs.jsonl"))}
    want = {"comp_5_00001": hint(peak), "comp_5_00001@batch_size=3": hint(peak * 3 // 2)}
    check(pairs == want, f"the LLM route's pairs carry the capture's hint, scaled to batch_size 3 ({pairs})")


def main():
    if len(sys.argv) < 2:
        print("usage: datagen_memory_test.py KILN")
        return 2
    kiln = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        llm_route(kiln, tmp)
        progs = os.path.join(tmp, "programs")
        os.makedirs(progs)
        for f in os.listdir(os.path.join(HERE, "programs")):
            os.symlink(os.path.join(HERE, "programs", f), os.path.join(progs, f))
        peaks = {}
        caps = os.path.join(tmp, "captures.jsonl")
        with open(caps, "w") as f:
            for c in lines(os.path.join(HERE, "captures.jsonl")):
                peaks[c["id"]] = 6 * GiB if c["id"] in BIG else 64 * MiB
                f.write(json.dumps(dict(c, gpu_peak_bytes=peaks[c["id"]])) + "\n")
        env, log = fake_gpu_env(tmp, peaks)
        out = os.path.join(tmp, "run")
        r = subprocess.run([kiln, "datagen", "--out", out, "--from", progs, "--captures", caps, "--python", FAKE,
                            "--check-workers", "3", "--trials", "1", "--no-db", "--allow-benchmark", "--quiet"],
                           capture_output=True, text=True, timeout=300, env=env)
        check(r.returncode == 0, f"datagen exits 0 (got {r.returncode}: {r.stderr[-600:]})")
        pairs = {p["id"]: p for p in lines(os.path.join(out, "verify_pairs.jsonl"))}
        check(len(pairs) == 17, f"17 candidates verified (got {len(pairs)})")
        bad = [i for i, p in pairs.items() if p.get("memory_hint_bytes") != hint(peaks[i])]
        check(not bad, f"every pair carries 1.25 x its captured peak + 256 MiB as memory_hint_bytes (not: {bad})")
        results = {x["id"]: x for x in lines(os.path.join(out, "verify.jsonl"))}
        check(all(results.get(i, {}).get("verdict") == "ok" for i in pairs), "every candidate verified ok")
        calls = lines(log) if os.path.exists(log) else []
        check(not [c for c in calls if c["oom"]], "no check ran out of the fake GPU's memory")
        for i in sorted(BIG):
            ws = warnings(results.get(i, {}))
            check(any("its memory hint is 7.75 GiB" in w and "runs alone" in w for w in ws),
                  f"{i}: admitted alone by its hint on its first try ({ws})")
            check(not any("retried alone" in w or "out of memory" in w for w in ws), f"{i}: no out-of-memory retry")
            mine = [c for c in calls if c["name"] == i]
            check(len(mine) == 1, f"{i}: evaluated once ({len(mine)} calls)")
            beside = [c["name"] for c in calls for m in mine
                      if c is not m and c["start"] < m["end"] and m["start"] < c["end"]]
            check(not beside, f"{i}: nothing ran beside it ({beside})")
        shared = [i for i in pairs if i not in BIG and any("runs alone" in w for w in warnings(results.get(i, {})))]
        check(not shared, f"the small programs (hint 336 MiB) share the GPU: none runs alone ({shared})")
        if failures:
            print(open(log).read()[:1500] if os.path.exists(log) else "no log")
    print(f"datagen_memory: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
