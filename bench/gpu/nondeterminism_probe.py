"""Are a TritonBench-G module's test outputs reproducible? (GPU diagnostic for the self-eval's mismatches)

  python3 bench/gpu/nondeterminism_probe.py KERNEL.py [...]   (one module per process: a module that faults
  takes its CUDA context down)   -> one line per module and output leaf that
  differs between runs: how many elements differ from run 0, in each of N runs of the test function with
  the same seed (plain runs, then runs after the caching allocator was filled with NaN blocks)."""
import importlib.util
import math
import sys

import torch


def leaves(x, p=""):
    if isinstance(x, torch.Tensor):
        yield p, x
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, f"{p}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            yield from leaves(v, f"{p}[{i}]")


def flood():
    bufs = [torch.full((1 << 20,), math.nan, device="cuda") for _ in range(64)]
    del bufs


def main():
    for path in sys.argv[1:]:
        name = path.rsplit("/", 1)[-1][:-3]
        torch.manual_seed(0)
        spec = importlib.util.spec_from_file_location(f"probe_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as e:  # noqa: BLE001
            print(f"{name}: import failed: {type(e).__name__}: {e}"[:300])
            continue
        tests = [getattr(mod, n) for n in dir(mod) if n.startswith("test_") and callable(getattr(mod, n))]
        for t in tests:
            runs = []
            for i in range(8):
                if i >= 4:
                    flood()
                torch.manual_seed(0)
                out = t()
                torch.cuda.synchronize()
                runs.append({p: v.detach().clone() for p, v in leaves(out)})
            base = runs[0]
            any_diff = False
            for p, v0 in base.items():
                diffs = []
                for r in runs[1:]:
                    v = r.get(p)
                    if v is None or v.shape != v0.shape:
                        diffs.append("shape")
                        continue
                    a, b = v0.double() if v0.is_floating_point() else v0, v.double() if v.is_floating_point() else v
                    d = ~((a == b) | (torch.isnan(a) & torch.isnan(b))) if v0.is_floating_point() else (a != b)
                    diffs.append(int(d.sum()))
                if any(x != 0 for x in diffs):
                    any_diff = True
                    nan0 = int(torch.isnan(v0).sum()) if v0.is_floating_point() else 0
                    print(f"{name}.{t.__name__}{p}: numel {v0.numel()} nan {nan0}; differing vs run 0 "
                          f"(runs 1-3 plain, 4-7 after NaN flood): {diffs}")
            if not any_diff:
                print(f"{name}.{t.__name__}: all {len(base)} leaves identical over 8 runs")


if __name__ == "__main__":
    main()
