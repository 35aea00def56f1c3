#!/usr/bin/env python3
"""bench/gpu/autotune_compile_probe.py on the CPU (--target cuda:90: Triton's compiler and ptxas need no GPU):
a TritonBench-G-style module with an autotuned kernel under a heuristic (2 configs) and a plain @triton.jit
kernel, launched by its test on device="cuda" tensors. Checks one row per config and per plain kernel, each
compiled from its captured launch; a limit too short to start a compile gives rows cut before their compile
(never a hang); a file without the 146-'#' line is an error (exit 2).

    compile_probe_test.py        exit 77 when $KILN_PYTHON (default .venv/bin/python3) lacks torch/triton
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "bench", "gpu", "autotune_compile_probe.py")
PY = os.environ.get("KILN_PYTHON", os.path.join(ROOT, ".venv", "bin", "python3"))

MODULE = '''import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1), triton.Config({"BLOCK": 128}, num_warps=4)],
                 key=["n"])
@triton.heuristics({"EVEN": lambda a: a["n"] % a["BLOCK"] == 0})
@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


def scale(x):
    y = torch.empty_like(x)
    scale_kernel[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, y, x.numel())
    add_one_kernel[(triton.cdiv(x.numel(), 256),)](y, y.numel(), BLOCK=256)
    return y
'''
TEST = '''
def test_scale():
    x = torch.randn(1000, device="cuda")
    return {"test_case_1": scale(x)}

result_gold = test_scale()
'''

fails = 0


def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"), flush=True)
    fails += not cond


def probe(path, *args):
    p = subprocess.run([PY, PROBE, path, "--target", "cuda:90", *args], capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def main():
    try:
        ok = subprocess.run([PY, "-c", "import torch, triton"], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        print("skip: no torch/triton")
        return 77
    tmp = tempfile.mkdtemp(prefix="kiln_compile_probe_")
    path = os.path.join(tmp, "scale.py")
    open(path, "w").write(MODULE + "\n" + "#" * 146 + "\n" + TEST)
    out = os.path.join(tmp, "rows.json")

    rc, stdout, err = probe(path, "--jobs", "2", "--limit", "300", "--json", out)
    rows = json.load(open(out)) if rc == 0 else []
    by = {(r["kernel"], r["config"]): r for r in rows}
    check("exit 0, one row per config and per plain kernel", rc == 0 and sorted(by) ==
          [("add_one_kernel", 0), ("scale_kernel", 0), ("scale_kernel", 1)], f"rc {rc}\n{stdout}\n{err[-1500:]}")
    if rc == 0:
        check("each compiled from its launch", all(r.get("compile_s", 0) > 0 and r.get("ptx_lines", 0) > 0
                                                   for r in rows), rows)
        check("the configs as the autotuner lists them",
              by[("scale_kernel", 0)]["desc"] == "BLOCK=64, num_warps=1, num_stages=3"
              and by[("scale_kernel", 1)]["desc"] == "BLOCK=128, num_warps=4, num_stages=3"
              and by[("add_one_kernel", 0)]["desc"] == "its launch", rows)
        check("the two configs compile to different code (each config applied)",
              by[("scale_kernel", 0)].get("ptx_lines") != by[("scale_kernel", 1)].get("ptx_lines"), rows)
        check("the table last", stdout.rstrip().splitlines()[-1].startswith("| scale_kernel | BLOCK=128"), stdout)

    rc, stdout, err = probe(path, "--jobs", "3", "--limit", "0.3")
    check("a limit too short: every row cut before its compile, no hang", rc == 0
          and stdout.count("not reached (cut at") == 3, f"rc {rc}\n{stdout}\n{err[-800:]}")

    plain = os.path.join(tmp, "plain.py")
    open(plain, "w").write(MODULE)
    rc, _, err = probe(plain)
    check("not a TritonBench-G file: exit 2 naming it", rc == 2 and f"{plain}: error:" in err, f"rc {rc}: {err}")
    if not fails:
        subprocess.run(["rm", "-rf", tmp])
    print(f"{fails} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
