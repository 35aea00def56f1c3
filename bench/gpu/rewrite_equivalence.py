#!/usr/bin/env python3
"""GPU check that kiln's source rewrites keep results equal, on the real compiled Triton path.

Two sets:
  corpus  every TritonBench-G kernel module (read in place): kiln_rewrite_apply --sweep writes one
          variant per launched kernel and applicable rewrite (default requests: set_params doubles
          the first editable tunable, insert_autotune with the current values, group_m_swizzle,
          eviction_hints, dot_precision tf32, pipeline_loop, split_k, persistent_grid,
          rows_per_program). Each module runs its own test at import and leaves `result_gold`; the
          original's and the variant's are compared.
  cases   the `ok+interp` lines of tests/rewrite/golden.txt (small kernels with kiln_check()),
          compiled this time instead of interpreted.

Every module runs in its own child process (a bad rewrite can poison the CUDA context). A pair is
`equal`, `mismatch` (the rewrite changed results: a bug), `variant_error` (the variant fails where
the original runs: a bug unless it is a resource limit such as out of shared memory, shown as
`variant_resource`), `original_error` (the corpus module itself fails here: not counted) or
`original_unstable` (two runs of the original differ: not counted). dot_precision variants (tf32 on
purpose) are compared at 2e-2.

Usage (on the GPU host, after building kiln_rewrite_apply):
  python3 bench/gpu/rewrite_equivalence.py --tool build/release/tests/rewrite/kiln_rewrite_apply \
      [--set corpus|cases|both] [--only SUBSTRING] [--timeout 300] [--json out.json]
Exit 0 when there is no mismatch and no variant_error, 1 otherwise.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_CORPUS = os.path.join(REPO, "..", "shared", "corpus", "tritonbench", "G", "kernels")

CHILD = r'''
import importlib.util, sys, torch
path, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
torch.manual_seed(0)
spec = importlib.util.spec_from_file_location("kiln_eq_mod", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
res = mod.kiln_check() if mode == "cases" else getattr(mod, "result_gold", None)
if torch.cuda.is_available():
    torch.cuda.synchronize()
def cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(cpu(v) for v in x)
    return x
torch.save(cpu(res), out)
'''

RESOURCE_WORDS = ("out of resource", "OutOfResources", "shared memory", "too many resources", "register")


def run_child(path, out, mode, timeout):
    t = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, path, out, mode], capture_output=True, text=True,
                           timeout=timeout)
        ok = p.returncode == 0
        msg = (p.stderr or p.stdout).strip().splitlines()[-1:] if not ok else []
    except subprocess.TimeoutExpired:
        ok, msg = False, ["timeout"]
    return ok, " ".join(msg)[:300], time.time() - t


def _load(path):
    # our own child's output (torch.save of the module's results, numpy arrays among them)
    import torch
    return torch.load(path, weights_only=False)


def compare(a, b, path="result", loose=False):
    """None when equal within tolerance (fp16/bf16 1e-2, fp32 1e-4; `loose`: 2e-2 for every float, for
    dot_precision variants, which trade fp32 products for tf32 on purpose), else where they differ."""
    import torch
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    # numpy arrays (and numpy scalars) compare like tensors: `a == b` of arrays has no truth value.
    if np is not None:
        if isinstance(a, np.ndarray):
            a = torch.from_numpy(a)
        if isinstance(b, np.ndarray):
            b = torch.from_numpy(b)
        if isinstance(a, np.generic):
            a = a.item()
        if isinstance(b, np.generic):
            b = b.item()
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return f"{path}: tensor vs {type(b).__name__}"
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: {tuple(a.shape)}/{a.dtype} vs {tuple(b.shape)}/{b.dtype}"
        if loose and a.is_floating_point():
            tol = 2e-2
        elif a.dtype in (torch.float16, torch.bfloat16):
            tol = 1e-2
        elif a.is_floating_point():
            tol = 1e-4
        else:
            return None if torch.equal(a, b) else f"{path}: integer values differ"
        af, bf = a.float(), b.float()
        if not torch.equal(torch.isnan(af), torch.isnan(bf)):
            return f"{path}: NaN positions differ"
        if not torch.allclose(af, bf, atol=tol, rtol=tol, equal_nan=True):
            return f"{path}: max abs error {(af - bf).abs().nan_to_num().max().item():.3g}"
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys differ"
        for k in a:
            r = compare(a[k], b[k], f"{path}[{k!r}]", loose)
            if r:
                return r
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            r = compare(x, y, f"{path}[{i}]", loose)
            if r:
                return r
        return None
    if isinstance(a, float) or isinstance(b, float):
        # A Python float (a loss, a norm) is an fp32 result too: a different tile or reduction order
        # changes its last bits. Same tolerance as fp32 tensors (bool is an int, not a float).
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
                and not isinstance(b, bool):
            tol = 2e-2 if loose else 1e-4
            if math.isnan(a) or math.isnan(b):
                return None if math.isnan(a) and math.isnan(b) else f"{path}: {a!r} vs {b!r}"
            return None if math.isclose(a, b, rel_tol=tol, abs_tol=tol) else f"{path}: {a!r} vs {b!r}"
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def corpus_pairs(args, tmp):
    files = sorted(f for f in os.listdir(args.corpus) if f.endswith(".py"))
    for f in files:
        src = os.path.join(args.corpus, f)
        outdir = os.path.join(tmp, "variants")
        os.makedirs(outdir, exist_ok=True)
        p = subprocess.run([args.tool, "--sweep", src, outdir], capture_output=True, text=True)
        for line in p.stdout.splitlines():
            if line.startswith("file "):
                v = line[5:].strip()
                label = os.path.basename(v)[:-3]
                if args.only in label:
                    yield src, v, label
            elif line.startswith("FAIL"):
                print(f"note: {f}: {line}")


def case_pairs(args, tmp):
    root = os.path.join(REPO, "tests", "rewrite")
    with open(os.path.join(root, "golden.txt")) as fh:
        for n, line in enumerate(fh, 1):
            parts = [x.strip() for x in line.split("|")]
            if len(parts) != 5 or parts[0] != "ok+interp":
                continue
            _, file, kernel, request, golden = parts
            label = golden[:-5]
            if args.only not in label:
                continue
            src = os.path.join(root, file)
            reqs = [r.strip() for r in request.split(";;")]
            p = subprocess.run([args.tool, src, kernel, *reqs], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"note: {label}: rewrite refused: {p.stderr.strip()}")
                continue
            v = os.path.join(tmp, f"case_{n}.py")
            with open(v, "w") as out:
                out.write(p.stdout)
            yield src, v, label


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tool", required=True, help="path to kiln_rewrite_apply")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--set", choices=["corpus", "cases", "both"], default="both")
    ap.add_argument("--only", default="", help="substring of the variant label")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", default="")
    ap.add_argument("--jobs", type=int, default=1, help="child processes at once (each owns its CUDA context)")
    ap.add_argument("--every", type=int, default=1, help="take every N-th variant (a sample, for short sessions)")
    ap.add_argument("--allow-cpu", action="store_true", help=argparse.SUPPRESS)  # script self-test only
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available() and not args.allow_cpu:
        print("no GPU: this check runs the compiled path; use tests/rewrite/interp_check.py on the CPU")
        return 77
    rows = []
    from concurrent.futures import ThreadPoolExecutor
    with tempfile.TemporaryDirectory() as tmp:
        pairs = []
        if args.set in ("corpus", "both"):
            pairs += [("corpus",) + p for p in corpus_pairs(args, tmp)]
        if args.set in ("cases", "both"):
            pairs += [("cases",) + p for p in case_pairs(args, tmp)]
        pairs = pairs[::max(1, args.every)]
        print(f"{len(pairs)} variants, {args.jobs} jobs", flush=True)
        # Originals first (each once), then every variant; each in its own child process.
        origs = sorted({(mode, src) for mode, src, _, _ in pairs})
        orig_out = {}

        def run_orig(ms):
            # Twice: a module whose own runs differ (races, reads of memory it never wrote; several
            # TritonBench-G modules) cannot tell a rewrite's change from its own.
            mode, src = ms
            o = os.path.join(tmp, f"orig_{abs(hash(src))}.pt")
            ok, msg, secs = run_child(src, o, mode, args.timeout)
            if not ok:
                return src, (None, msg)
            ok2, msg2, _ = run_child(src, o + ".2.pt", mode, args.timeout)
            try:
                why = compare(_load(o), _load(o + ".2.pt")) if ok2 else msg2
            except Exception as e:  # noqa: BLE001 - an unreadable result: the pair cannot be judged
                return src, (None, f"cannot compare two runs: {type(e).__name__}: {e}"[:300])
            return src, (o, "" if not why else f"unstable: {why}")

        def run_variant(item):
            mode, src, variant, label = item
            o, omsg = orig_out[src]
            row = {"set": mode, "label": label, "original": os.path.basename(src)}
            if o is None:
                row.update(verdict="original_error", detail=omsg)
                return row
            if omsg.startswith("unstable"):
                row.update(verdict="original_unstable", detail=omsg)
                return row
            vo = variant + ".pt"
            ok, msg, secs = run_child(variant, vo, mode, args.timeout)
            row["seconds"] = round(secs, 1)
            if not ok:
                res = any(w.lower() in msg.lower() for w in RESOURCE_WORDS)
                row.update(verdict="variant_resource" if res else "variant_error", detail=msg)
            else:
                try:
                    why = compare(_load(o), _load(vo), loose="dot_precision" in label)
                    row.update(verdict="mismatch" if why else "equal", detail=why or "")
                except Exception as e:  # noqa: BLE001
                    row.update(verdict="variant_error", detail=f"cannot compare: {type(e).__name__}: {e}"[:300])
            return row

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for src, res in pool.map(run_orig, origs):
                orig_out[src] = res
            for row in pool.map(run_variant, pairs):
                rows.append(row)
                print(f"{row['verdict']:<16} {row['label']:<70} {row.get('detail', '')}", flush=True)
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print("summary:", ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "counts": counts}, fh, indent=1)
    bad = counts.get("mismatch", 0) + counts.get("variant_error", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
