#!/usr/bin/env python3
"""Writes a batch of honest Triton candidates for KernelBench level-1 elementwise tasks.

    python3 gen_candidates.py --corpus <shared/corpus> --out DIR [--blocks 512,1024,2048,4096]

Each (task, BLOCK) pair is a distinct candidate source (so nothing is served from a cache or shares a
compiled kernel). Writes DIR/cand_*.py, DIR/pairs.jsonl (kiln eval --batch input) and DIR/requests/*.json
(the same evaluations as one-shot worker requests, for the fresh-process-per-candidate harness).
The task files are read in place from the corpus; sizes are overridden to moderate values so a run of
tens of candidates fits in minutes (both harnesses get the same sizes)."""
import argparse
import json
import os

# task file -> (kernel body expression over x, extra scalar args of forward, sizes)
ELEMENTWISE = {
    "19_ReLU.py": "tl.maximum(x, 0.0)",
    "20_LeakyReLU.py": "tl.where(x >= 0, x, x * 0.01)",
    "22_Tanh.py": "2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0",
    "25_Swish.py": "x / (1.0 + tl.exp(-x))",
    "26_GELU_.py": "0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))",
    "27_SELU_.py": "1.0507009873554805 * tl.where(x > 0, x, 1.6732632423543772 * (tl.exp(x) - 1.0))",
    "28_HardSigmoid.py": "tl.minimum(tl.maximum(x / 6.0 + 0.5, 0.0), 1.0)",
    "30_Softsign.py": "x / (1.0 + tl.abs(x))",
    "32_HardTanh.py": "tl.minimum(tl.maximum(x, -1.0), 1.0)",
}
SIZES = {"batch_size": 64, "dim": 393216}

TEMPLATE = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def {name}_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
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
        {name}_kernel[(triton.cdiv(n, {block}),)](x, out, n, BLOCK={block})
        return out
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--blocks", default="512,1024,2048,4096")
    ap.add_argument("--mode", default="time")
    ap.add_argument("--sizes", default="", help="override, e.g. batch_size=2,dim=1024 (interpreter smoke runs)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N candidates")
    a = ap.parse_args()
    sizes = dict(SIZES)
    for kv in filter(None, a.sizes.split(",")):
        k, v = kv.split("=")
        sizes[k] = int(v)
    os.makedirs(os.path.join(a.out, "requests"), exist_ok=True)
    pairs = []
    for fname, expr in ELEMENTWISE.items():
        task = os.path.abspath(os.path.join(a.corpus, "kernelbench", "level1", fname))
        for block in [int(b) for b in a.blocks.split(",")]:
            name = fname[:-3].lower().strip("_").replace("__", "_").split("_", 1)[1] + f"_b{block}"
            path = os.path.abspath(os.path.join(a.out, f"cand_{name}.py"))
            with open(path, "w") as f:
                f.write(TEMPLATE.format(name=name.replace("-", "_"), expr=expr, block=block))
            pairs.append({"id": name, "task": task, "candidate": path, "sizes": sizes, "mode": a.mode})
            req = {"id": name, "op": "eval", "mode": a.mode, "policy": "strict", "seed": 1234, "trials": 3,
                   "task": {"format": "kernelbench", "name": "level1/" + fname[:-3], "path": task, "sizes": sizes},
                   "candidate": {"source": open(path).read(), "name": os.path.basename(path)},
                   "limits": {"timeout_s": 120}}
            with open(os.path.join(a.out, "requests", name + ".json"), "w") as f:
                json.dump(req, f)
    if a.limit:
        keep = {p["id"] for p in pairs[:a.limit]}
        pairs = pairs[:a.limit]
        for fn in os.listdir(os.path.join(a.out, "requests")):
            if fn[:-5] not in keep:
                os.remove(os.path.join(a.out, "requests", fn))
    with open(os.path.join(a.out, "pairs.jsonl"), "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    print(f"{len(pairs)} candidates in {a.out}")


if __name__ == "__main__":
    main()
