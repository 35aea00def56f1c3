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
`variant_resource`, or a Triton compile failure of a variant that only sets num_ctas > 1, shown as
`variant_unsupported`: Triton 3.6 cannot lay out many kernels over a CTA cluster, the source is
right), `autotune_pick` (results differ and the autotuner picked a different config than in the
original's run, for a kernel whose configs the rewrite left alone: a kernel whose results depend on
its config, e.g. layer_norm_welfold summing masked-out lanes, differs with the timing, not with the
rewrite), `original_error` (the corpus module itself fails here: not counted) or `original_unstable`
(runs of the original differ: not counted). The original runs three times: twice in one process
(the second run sees other memory next to its buffers and re-runs the autotuner: a module that reads
past its buffers, e.g. fused_recurrent_delta's backward reading the stride-0 gradients of `.sum()`
as contiguous, differs there) and once in another process. dot_precision variants (tf32 on purpose)
are compared at 2e-2. Only `mismatch` and `variant_error` are counted as failures.

Usage (on the GPU host, after building kiln_rewrite_apply):
  python3 bench/gpu/rewrite_equivalence.py --tool build/release/tests/rewrite/kiln_rewrite_apply \
      [--set corpus|cases|both] [--only SUBSTRING] [--timeout 300] [--json out.json] [--skip-done EARLIER.log]
      [--interpret]
--interpret runs the same pairs under Triton's interpreter on the CPU, through the worker's shims: the
rewrites' semantics without a GPU (masks, offsets, grids, loop bounds; not what only the compiler reads,
such as num_warps or resource limits). Modules the interpreter cannot run are `original_error`.
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
import contextlib, importlib.util, json, sys, torch
path, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 1
shim = contextlib.nullcontext
if len(sys.argv) > 5:
    # --interpret: Triton's interpreter on the CPU, with the worker's shims (device="cuda" means CPU,
    # fake torch.cuda streams and events, the numpy-2 and autotuner fixes of the interpreter).
    sys.path.insert(0, sys.argv[5])
    from kiln_worker import platform as P
    P.select_mode(True)
    P.install_launch_instrumentation()
    P.install_interpreter_shims()
    shim = P.cuda_shim
    torch.set_num_threads(1)
def cpu(x):
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(cpu(v) for v in x)
    return x
def picks(mod):
    # The config the autotuner chose for each key, per autotuned kernel of the module.
    try:
        from triton.runtime.autotuner import Autotuner
    except Exception:
        return {}
    out = {}
    for name, v in vars(mod).items():
        seen = 0
        while v is not None and seen < 4 and not isinstance(v, Autotuner):
            v, seen = getattr(v, "fn", None), seen + 1
        if isinstance(v, Autotuner):
            out[name] = {str(k): str(c) for k, c in getattr(v, "cache", {}).items()}
    return out
all_picks = []
for r in range(repeat):
    torch.manual_seed(0)
    spec = importlib.util.spec_from_file_location("kiln_eq_mod%d" % r, path)
    mod = importlib.util.module_from_spec(spec)
    with shim():
        spec.loader.exec_module(mod)
        res = mod.kiln_check() if mode == "cases" else getattr(mod, "result_gold", None)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    torch.save(cpu(res), out if r == 0 else out + ".rep%d.pt" % r)
    all_picks.append(picks(mod))
with open(out + ".picks.json", "w") as fh:
    json.dump(all_picks, fh)
'''

RESOURCE_WORDS = ("out of resource", "OutOfResources", "shared memory", "too many resources", "register")


WORKER_DIR = os.path.join(REPO, "worker")
INTERPRET = False  # --interpret


def run_child(path, out, mode, timeout, repeat=1):
    t = time.time()
    argv = [sys.executable, "-c", CHILD, path, out, mode, str(repeat)] + ([WORKER_DIR] if INTERPRET else [])
    env = dict(os.environ, TRITON_INTERPRET="1") if INTERPRET else None
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout * repeat, env=env)
        ok = p.returncode == 0
        msg = (p.stderr or p.stdout).strip().splitlines()[-1:] if not ok else []
    except subprocess.TimeoutExpired:
        ok, msg = False, ["timeout"]
    return ok, " ".join(msg)[:300], time.time() - t


def _load(path):
    # our own child's output (torch.save of the module's results, numpy arrays among them)
    import torch
    return torch.load(path, weights_only=False)


def _picks(out):
    """The autotuner's choices of each run of a child ([{kernel: {key: config}}, ...]); [] when none."""
    try:
        with open(out + ".picks.json") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return []


def pick_difference(a, b, skip=()):
    """Kernels (not in `skip`) whose autotuner chose a different config for the same key in two runs."""
    diff = []
    for name in sorted(set(a) & set(b)):
        if name in skip:
            continue
        for key in sorted(set(a[name]) & set(b[name])):
            if a[name][key] != b[name][key]:
                diff.append(f"{name} {a[name][key]} vs {b[name][key]}")
    return diff


def sets_num_ctas(request):
    """The request sets num_ctas above 1 (Triton lays the kernel out over a CTA cluster)."""
    for tok in request.split():
        if tok.startswith("num_ctas="):
            try:
                return int(tok.split("=", 1)[1]) > 1
            except ValueError:
                return False
    return False


COMPILE_WORDS = ("PassManager::run failed", "MLIR pass pipeline", "CompilationError")


def classify_failure(msg, request):
    """Verdict of a variant that failed where the original ran."""
    if any(w.lower() in msg.lower() for w in RESOURCE_WORDS):
        return "variant_resource"
    if sets_num_ctas(request) and any(w.lower() in msg.lower() for w in COMPILE_WORDS):
        # The source is right (a launch option); Triton 3.6 cannot plan many kernels over a CTA cluster
        # (TritonGPUPlanCTAPass fails on 1-D slice layouts; 'nvvm.mapa' in ConvertTritonGPUToLLVM).
        return "variant_unsupported"
    return "variant_error"


def classify_results(orig, variant, orig_picks, variant_picks, kernel, request, loose=False):
    """(verdict, detail) of a variant that ran: equal, mismatch, or autotune_pick when results differ and
    the autotuner chose differently for a kernel whose configs the request left alone."""
    why = compare(orig, variant, loose=loose)
    if not why:
        return "equal", ""
    edits_configs = request.split()[0] in ("set_params", "insert_autotune") if request.strip() else True
    d = pick_difference(orig_picks[0], variant_picks[0], skip=(kernel,) if edits_configs else ()) \
        if orig_picks and variant_picks else []
    if d:
        return "autotune_pick", f"{why} (autotuner picks differ: {d[0]})"
    return "mismatch", why


def judge_original(first, repeat, other, picks, other_error=""):
    """'' when the original's runs agree, else why not: `first` and `repeat` ran in one process, `other`
    (None when that run failed with `other_error`) in another."""
    why = compare(first, repeat)
    if why:
        d = pick_difference(picks[0], picks[1]) if len(picks) > 1 else []
        return f"{why} (two runs in one process" + (f"; autotuner picks differ: {d[0]}" if d else "") + ")"
    if other is None:
        return other_error or "the second process failed"
    return compare(first, other) or ""


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


VERDICTS = ("equal", "mismatch", "variant_error", "variant_resource", "variant_unsupported", "autotune_pick",
            "original_error", "original_unstable")


def done_labels(paths):
    """Variant labels that already have a verdict in earlier logs of this script (its printed rows,
    `VERDICT  LABEL  detail`): --skip-done resumes a run that a time limit ended."""
    done = set()
    for path in paths:
        with open(path) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 2 and parts[0] in VERDICTS:
                    done.add(parts[1])
    return done


def corpus_pairs(args, tmp):
    files = sorted(f for f in os.listdir(args.corpus) if f.endswith(".py"))
    for f in files:
        src = os.path.join(args.corpus, f)
        outdir = os.path.join(tmp, "variants")
        os.makedirs(outdir, exist_ok=True)
        p = subprocess.run([args.tool, "--sweep", src, outdir], capture_output=True, text=True)
        pending = None
        for line in p.stdout.splitlines():
            if line.startswith("file "):
                pending = line[5:].strip()
            elif line.startswith("ok ") and pending:
                # "ok   KERNEL REQUEST: " follows the file it wrote
                kernel, _, request = line[3:].strip().rstrip(":").strip().partition(" ")
                v, pending = pending, None
                label = os.path.basename(v)[:-3]
                if args.only in label:
                    yield src, v, label, kernel, request.rstrip(":").strip()
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
            yield src, v, label, kernel, request


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
    ap.add_argument("--skip-done", action="append", default=[], metavar="LOG",
                    help="skip the variants that have a verdict in this earlier log (repeatable)")
    ap.add_argument("--interpret", action="store_true",
                    help="run every module under Triton's interpreter on the CPU (device='cuda' maps to the CPU): "
                         "checks the rewrites' semantics where no GPU is at hand; launch options that only the "
                         "compiler reads (num_warps, num_stages, num_ctas) change nothing there")
    ap.add_argument("--allow-cpu", action="store_true", help=argparse.SUPPRESS)  # script self-test only
    args = ap.parse_args()
    global INTERPRET
    INTERPRET = args.interpret
    import torch
    if not torch.cuda.is_available() and not args.allow_cpu and not args.interpret:
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
        if args.skip_done:
            done = done_labels(args.skip_done)
            before = len(pairs)
            pairs = [p for p in pairs if p[3] not in done]
            print(f"skipping {before - len(pairs)} variants with a verdict in {', '.join(args.skip_done)}", flush=True)
        pairs = pairs[::max(1, args.every)]
        print(f"{len(pairs)} variants, {args.jobs} jobs", flush=True)
        # Originals first (each once), then every variant; each in its own child process.
        origs = sorted({(mode, src) for mode, src, *_ in pairs})
        orig_out = {}

        def run_orig(ms):
            # Three runs: a module whose own runs differ (races, reads of memory it never wrote, results
            # that depend on the autotuner's timing-based pick; several TritonBench-G modules) cannot tell
            # a rewrite's change from its own. Two run in one process (the second sees other memory next
            # to its buffers and autotunes again), one in another process.
            mode, src = ms
            o = os.path.join(tmp, f"orig_{abs(hash(src))}.pt")
            ok, msg, secs = run_child(src, o, mode, args.timeout, repeat=2)
            if not ok:
                return src, (None, msg)
            ok2, msg2, _ = run_child(src, o + ".2.pt", mode, args.timeout)
            try:
                why = judge_original(_load(o), _load(o + ".rep1.pt"), _load(o + ".2.pt") if ok2 else None, _picks(o),
                                     msg2)
            except Exception as e:  # noqa: BLE001 - an unreadable result: the pair cannot be judged
                return src, (None, f"cannot compare runs: {type(e).__name__}: {e}"[:300])
            return src, (o, "" if not why else f"unstable: {why}")

        def run_variant(item):
            mode, src, variant, label, kernel, request = item
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
            row["request"] = request
            if not ok:
                row.update(verdict=classify_failure(msg, request), detail=msg)
            else:
                try:
                    verdict, why = classify_results(_load(o), _load(vo), _picks(o), _picks(vo), kernel, request,
                                                    loose="dot_precision" in label)
                    row.update(verdict=verdict, detail=why)
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
