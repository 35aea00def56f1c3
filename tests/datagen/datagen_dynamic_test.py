#!/usr/bin/env python3
"""End-to-end tests of the dynamic-shape compiler route (`kiln datagen --dynamic-shapes`, issue 19) on the CPU:
the dynamic captures recorded with Inductor's Triton CPU backend (tests/datagen/dynamic_cpu/captures.jsonl, by
tests/datagen/record_dynamic_cpu.py) converted and verified under Triton's interpreter at three batch sizes each
(kiln eval's batch, strict policy); a candidate whose numel was frozen to the captured batch passes at that shape
and is rejected at the next; a fresh recording with this machine's torch converts; and 14 dynamic captures
recorded with CUDA Inductor on an H200 (session 15, `bench/gpu/datagen_dynamic.sh`: 30 of 30 kept there at 3
batch sizes; tests/datagen/dynamic_gpu) convert and pass at 3 batch sizes under the interpreter.

usage: datagen_dynamic_test.py KILN   ($KILN_PYTHON: python with torch and triton; exit 77 without one)
"""
import json
import os
import subprocess
import sys

from datagen_harness import DATA, KILN, PY, check, lines, main  # noqa: E402

CAPTURES = os.path.join(DATA, "dynamic_cpu", "captures.jsonl")


def kiln(*args, timeout=600):
    env = dict(os.environ, KILN_PYTHON=PY)
    return subprocess.run([KILN, "datagen", *args], capture_output=True, text=True, timeout=timeout, env=env)


def programs_with_a_frozen_twin(tmp):
    """The recorded programs plus comp_5_90007: comp_5_00007 whose capture launches its kernel over the captured
    batch (4) instead of the batch symbol: right at the program's shape only."""
    progs = os.path.join(tmp, "programs")
    os.makedirs(progs)
    for f in os.listdir(os.path.join(DATA, "programs")):
        os.symlink(os.path.join(DATA, "programs", f), os.path.join(progs, f))
    text = open(os.path.join(DATA, "programs", "comp_5_00007.py")).read()
    open(os.path.join(progs, "comp_5_90007.py"), "w").write(text.replace("comp_5_00007", "comp_5_90007"))
    recs = lines(CAPTURES)
    twin = json.loads(json.dumps(next(c for c in recs if c["id"] == "comp_5_00007")))
    twin["id"] = "comp_5_90007"
    code = twin["codes"][0]
    launch = ".run(buf4, arg2_1, s27, s77, s27,"
    check(launch in code, "the recorded comp_5_00007 launches its kernel over s77 rows")
    twin["codes"][0] = code.replace(launch, ".run(buf4, arg2_1, s27, 4, s27,")
    caps = os.path.join(tmp, "captures.jsonl")
    with open(caps, "w") as f:
        for c in recs + [twin]:
            f.write(json.dumps(c) + "\n")
    return progs, caps


def verified_at_three_shapes(tmp):
    progs, caps = programs_with_a_frozen_twin(tmp)
    out = os.path.join(tmp, "run")
    r = kiln("--out", out, "--from", progs, "--from", os.path.join(DATA, "dynamic_cpu", "programs"), "--captures", caps,
             "--interpret", "--no-db", "--workers", "2", "--shapes", "3", "--quiet")
    check(r.returncode == 0, f"pipeline exits 0 (got {r.returncode}: {r.stderr[-400:]})")
    msgs = lines(os.path.join(out, "sft_messages.jsonl"))
    check(len(msgs) == 22, f"22 samples from the 24 dynamic recordings (2 bmm go to extern_kernels) (got {len(msgs)})")
    metas = {m["id"]: m.get("meta", {}) for m in msgs}
    bad = [i for i, m in metas.items() if m.get("shapes_verified") != 3 or not m.get("dynamic")]
    check(not bad, f"every sample is dynamic and verified at 3 shapes ({bad})")
    check(metas.get("comp_5_00007", {}).get("symbols") == ["s77 = x.size(0)", "s27 = x.size(1)"],
          f"the sample's meta lists its size symbols ({metas.get('comp_5_00007', {}).get('symbols')})")
    answer = next((m["messages"][2]["content"] for m in msgs if m["id"] == "comp_5_00007"), "")
    check("The sizes are read from the inputs (s77 = x.size(0), s27 = x.size(1))" in answer,
          "the sample's reasoning says where the sizes come from")
    verify = {v["id"]: v for v in lines(os.path.join(out, "verify.jsonl"))}
    shapes = sorted(i for i in verify if i.startswith("comp_5_00007@"))
    check(shapes == ["comp_5_00007@batch_size=5", "comp_5_00007@batch_size=7"],
          f"comp_5_00007 (batch 4) verified at batch sizes 5 and 7 too ({shapes})")
    rej = {(x["id"], x["reason"]) for x in lines(os.path.join(out, "rejects.jsonl"))}
    want = {("comp_5_00014", "extern_kernel"), ("comp_5_00015", "extern_kernel")}
    check(want <= rej, f"the bmm programs are extern_kernel rejects ({sorted(rej)})")
    frozen = [x for x in lines(os.path.join(out, "rejects.jsonl")) if x["id"] == "comp_5_90007"]
    check(len(frozen) == 1 and frozen[0]["reason"].startswith("verdict_")
          and "batch_size=5" in json.dumps(frozen[0].get("verdict")),
          f"the frozen twin is rejected at batch_size=5 ({frozen})")
    check(verify.get("comp_5_90007", {}).get("verdict") == "ok",
          f"the frozen twin passes at the captured shape ({verify.get('comp_5_90007', {}).get('verdict')})")


def fresh_recording_converts(tmp):
    """record_dynamic_cpu.py with this machine's torch: the worker's dynamic compile and recorder still give a
    capture the conversion takes."""
    rec = os.path.join(tmp, "fresh.jsonl")
    r = subprocess.run([PY, os.path.join(DATA, "record_dynamic_cpu.py"), rec, "programs/comp_5_00010.py"],
                       capture_output=True, text=True, timeout=300, cwd=DATA)
    check(r.returncode == 0, f"the recorder exits 0 ({r.stderr[-300:]})")
    caps = lines(rec) if os.path.exists(rec) else []
    c = caps[0] if caps else {}
    check(c.get("ok") and c.get("dynamic") and c.get("launches") and "config" in c["launches"][0],
          f"a dynamic capture with a launch config ({c.get('error', '')[:300]})")
    check(any(a.get("kind") == "scalar" for a in c.get("call_args", [])), "call takes the sizes as int arguments")
    out = os.path.join(tmp, "fresh_run")
    r = kiln("--out", out, "--from", os.path.join(DATA, "programs", "comp_5_00010.py"), "--captures", rec,
             "--stop-after", "convert", "--no-db", "--quiet")
    cand = os.path.join(out, "candidates", "comp_5_00010.py")
    check(r.returncode == 0 and os.path.exists(cand), f"it converts ({r.stderr[-300:]})")
    if os.path.exists(cand):
        check("s77 = x.size(0)" in open(cand).read(), "the candidate binds the batch symbol from x")


def gpu_recordings_verified_at_three_shapes(tmp):
    """The dynamic route on real CUDA Inductor output (H200, torch 2.11, triton 3.6): Grid1D reductions and
    pointwise kernels, FixedGrid matmul templates (comp_13_00009), batch_norm/amin, roll/flip/gathers. Picked
    as the 14 of the run's 30 programs that verify fastest under the interpreter (the others are the same
    kernels' families at larger sizes)."""
    d = os.path.join(DATA, "dynamic_gpu")
    out = os.path.join(tmp, "gpu_run")
    r = kiln("--out", out, "--from", os.path.join(d, "programs"), "--captures", os.path.join(d, "captures.jsonl"),
             "--interpret", "--no-db", "--workers", "2", "--shapes", "3", "--quiet")
    check(r.returncode == 0, f"pipeline exits 0 on the CUDA recordings (got {r.returncode}: {r.stderr[-400:]})")
    msgs = lines(os.path.join(out, "sft_messages.jsonl")) if os.path.exists(os.path.join(out, "sft_messages.jsonl")) else []
    rej = lines(os.path.join(out, "rejects.jsonl")) if os.path.exists(os.path.join(out, "rejects.jsonl")) else []
    check(len(msgs) == 14, f"14 samples from the 14 CUDA recordings (got {len(msgs)}; rejects "
                           f"{[(x['id'], x['reason'], x.get('message', '')[:120]) for x in rej]})")
    metas = {m["id"]: m.get("meta", {}) for m in msgs}
    bad = [i for i, m in metas.items() if m.get("shapes_verified") != 3 or not m.get("dynamic")]
    check(not bad, f"every CUDA-recorded sample is dynamic and verified at 3 shapes ({bad})")
    cand = os.path.join(out, "candidates", "comp_13_00009.py")
    text = open(cand).read() if os.path.exists(cand) else ""
    check("import triton" in text and "torch._inductor" not in text and "extern_kernels" not in text,
          "the matmul template candidate is standalone Triton (no inductor runtime, no extern kernels)")


if __name__ == "__main__":
    sys.exit(main("datagen_dynamic", [verified_at_three_shapes, fresh_recording_converts,
                                      gpu_recordings_verified_at_three_shapes]))
