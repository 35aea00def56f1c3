"""bench/optimize_suite/summarize.py on synthetic kiln optimize reports: the suite targets (geomean speedup over
kernels below 60% of roofline, kernels slower, median wall) and the autotune gap, from the search tables and,
when present, from the side-by-side timing."""
import json
import os
import subprocess
import sys
import tempfile


def report(name, speedup, roof, wall, improved=True, cases=None):
    return {"task": f"tritonbench_g/{name}", "category": "x", "improved": improved, "geomean_speedup": speedup,
            "roofline_before": roof, "roofline_after": roof, "suite_wall_s": wall, "kept_reason": "",
            "cases": cases or [{"name": "a", "speedup": speedup}]}


def run(d):
    out = subprocess.run([sys.executable, SUMMARIZE, d], capture_output=True, text=True, check=True).stdout
    return out


def main():
    with tempfile.TemporaryDirectory() as d:
        rows = [report("k1", 4.0, 0.1, 30), report("k2", 1.0, 0.5, 50, improved=False),
                report("k3", 1.0, 0.9, 70, improved=False), report("k4", 2.0, None, 40)]
        for r in rows:
            json.dump(r, open(os.path.join(d, r["task"].split("/")[1] + ".json"), "w"))
        out = run(d)
        # below 60% (or unprofiled): k1 4x, k2 1x, k4 2x -> (8)^(1/3) = 2
        assert "geomean speedup over 3 kernels below 60% of roofline (or unprofiled): 2.000x" in out, out
        assert "kernels ending slower than the original: 0" in out and "median optimize wall time: 45.0 s" in out, out

        cand = lambda cfg, ms: {"config": cfg, "score_ms": ms, "verdict": "ok", "cases": [{"name": "p9", "median_ms": ms}]}
        ex = {"candidates": [cand({"B": 1}, 2.0), cand({"B": 2}, 1.0), cand({"B": 4}, 1.5), cand({"B": 8}, 3.0)]}
        kj = {"best_config": {"B": 4}, "candidates": [cand({"B": 1}, 2.0)]}
        json.dump(ex, open(os.path.join(d, "autotune_t.exhaustive.json"), "w"))
        json.dump(kj, open(os.path.join(d, "autotune_t.kiln.json"), "w"))
        line = [l for l in run(d).splitlines() if l.startswith("t ")][0]
        assert "50.0%" in line and " 25%" in line and line.endswith("no"), line   # 1.5 / 1.0 - 1, 1 of 4
        sbs = [{"side": "exhaustive", "round": r, "verdict": "ok", "speedup": 1.10} for r in (1, 2, 3)] + \
              [{"side": "kiln", "round": r, "verdict": "ok", "speedup": s} for r, s in ((1, 1.09), (2, 1.08), (3, 1.5))]
        json.dump(sbs, open(os.path.join(d, "autotune_t.sidebyside.json"), "w"))
        line = [l for l in run(d).splitlines() if l.startswith("t ")][0]
        assert "0.9%" in line and "1.100x / 1.090x" in line and line.endswith("yes"), line  # 1.10 / 1.09 - 1
        # the same configuration picked by both: gap 0 whatever the noisy side-by-side says
        ex["best_config"] = {"B": 4}
        json.dump(ex, open(os.path.join(d, "autotune_t.exhaustive.json"), "w"))
        sbs[0]["speedup"] = sbs[1]["speedup"] = 1.6
        json.dump(sbs, open(os.path.join(d, "autotune_t.sidebyside.json"), "w"))
        line = [l for l in run(d).splitlines() if l.startswith("t ")][0]
        assert "0.0%" in line and "same pick" in line and line.endswith("yes"), line
    print("summarize: ok")


SUMMARIZE = sys.argv[1]
if __name__ == "__main__":
    main()
