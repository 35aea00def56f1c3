#!/usr/bin/env python3
"""How much GPU memory does a TritonBench-G module need at its largest perf sizes? A plain check, outside kiln.

    python3 bench/gpu/tbg_peak_probe.py [--corpus DIR] [--cases largest:K|all|I,J] NAME [NAME ...]

For each named module and case: the harness's inputs moved to the GPU (`to_cuda`, as the harness does), the
memory they take (the case's footprint), then one `call_op` and the peak the caching allocator saw. Printed
per case: footprint, peak, the peak as a multiple of the footprint, and the GPU's total; an out-of-memory
in the plain run is printed as `oom` (then the case does not fit on this GPU even without kiln). Uses the
module loader of tritonbench_g_self_repeat.py; no kiln code.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tritonbench_g_self_repeat import load_sweep  # noqa: E402

GIB = float(1 << 30)


def probe(inst, raw):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    try:
        x = inst.to_cuda(raw)
        torch.cuda.synchronize()
        fp = torch.cuda.memory_allocated() - base
        out = inst.call_op(x)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del out, x
        return fp, peak, None
    except torch.cuda.OutOfMemoryError as e:
        return None, torch.cuda.max_memory_allocated() - base, str(e).split(".")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("KILN_CORPUS_DIR"))
    ap.add_argument("--cases", default="largest:2")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    total = torch.cuda.get_device_properties(0).total_memory
    print(f"gpu: {torch.cuda.get_device_name(0)}, {total / GIB:.1f} GiB")
    for name in a.names:
        try:
            inst, sweep, idx = load_sweep(a.corpus, name, a.cases)
        except Exception as e:  # noqa: BLE001
            print(f"{name}: harness error {type(e).__name__}: {str(e)[:200]}", flush=True)
            continue
        for i in idx:
            fp, peak, err = probe(inst, sweep[i])
            if err:
                print(f"{name} perf_{i}: oom in the plain run (peak before {peak / GIB:.2f} GiB): {err}", flush=True)
            else:
                print(f"{name} perf_{i}: footprint {fp / GIB:.2f} GiB, peak {peak / GIB:.2f} GiB "
                      f"({peak / max(fp, 1):.2f}x), GPU {total / GIB:.1f} GiB", flush=True)
        del sweep, inst
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
