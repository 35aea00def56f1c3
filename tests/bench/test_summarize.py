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
        # --roofline-from: a re-measured roofline (the tuned kernel's, else the largest share) replaces the run's:
        # k2 at 50% re-measured at 90% leaves the set (4x, 2x -> 2.828x over 2), named; k1's 20% stays below
        with tempfile.TemporaryDirectory() as rr:
            def roof(name, kernels):
                json.dump({"kernels": [{"name": n, "time_share": sh, "roofline": {"fraction_of_roof": f}}
                                       for n, sh, f in kernels]}, open(os.path.join(rr, f"x.{name}.json"), "w"))
            roof("k2", [("other", 0.2, 0.1), ("main", 0.8, 0.9)])
            roof("k1", [("kernel_k1", 0.3, 0.2), ("big", 0.7, 0.95)])
            rows[0]["kernel"] = "kernel_k1"
            json.dump(rows[0], open(os.path.join(d, "k1.json"), "w"))
            out = subprocess.run([sys.executable, SUMMARIZE, d, "--roofline-from", rr], capture_output=True,
                                 text=True, check=True).stdout
            assert "geomean speedup over 2 kernels below 60% of roofline (or unprofiled): 2.828x" in out, out
            assert "re-measured for 2 kernels" in out and "across 60%: k2 50% -> 90%" in out, out
            assert "k1 10% -> 20%" not in out, out
        # a winner slower on one case: within the rounds' spread (0.995x, rounds 0.92-1.09), then in every round
        k5 = report("k5", 1.28, 0.09, 56, cases=[{"name": "p7", "speedup": 0.995, "spread": [0.918, 1.095]},
                                                 {"name": "p8", "speedup": 1.45, "spread": [1.44, 1.45]}])
        json.dump(k5, open(os.path.join(d, "k5.json"), "w"))
        out = run(d)
        assert "kernels ending slower than the original: 1 (target 0; 0 slower in every round" in out, out
        k5["cases"][0]["spread"] = [0.97, 0.99]
        json.dump(k5, open(os.path.join(d, "k5.json"), "w"))
        out = run(d)
        assert "kernels ending slower than the original: 1 (target 0; 1 slower in every round" in out, out
        # 0.999x in every round: within the 0.2% tie band, not counted as slower in every round
        k5["cases"][0]["speedup"], k5["cases"][0]["spread"] = 0.999, [0.9985, 0.9995]
        json.dump(k5, open(os.path.join(d, "k5.json"), "w"))
        out = run(d)
        assert "kernels ending slower than the original: 1 (target 0; 0 slower in every round" in out, out
        os.remove(os.path.join(d, "k5.json"))
        # measured at 76% of roofline, 10x faster on its slowest case: impossible (760% after), so by the speedup
        # it was below 60%: named in a second figure; an old report's estimate above 100% is not shown
        k6 = report("k6", 8.0, 0.76, 60, cases=[{"name": "p1", "speedup": 6.4, "baseline_ms": 0.1},
                                                {"name": "p2", "speedup": 10.0, "baseline_ms": 4.0}])
        k6["roofline_after"], k6["roofline_after_estimated"] = 7.6, True
        json.dump(k6, open(os.path.join(d, "k6.json"), "w"))
        out = run(d)
        assert "geomean speedup over 3 kernels below 60% of roofline (or unprofiled): 2.000x" in out, out
        assert "with 1 more whose verified speedup puts them below 60%" in out and "k6): 2.828x over 4" in out, out
        assert "760%" not in out, out
        k6["cases"][1]["speedup"] = 1.2   # 91% after: possible, not counted
        json.dump(k6, open(os.path.join(d, "k6.json"), "w"))
        assert "with 1 more" not in run(d)
        os.remove(os.path.join(d, "k6.json"))
        # an original that fails its own timed run (the module's harness, not kiln): counted at 1x in the target
        # figure, and a second figure without it, never instead
        k7 = report("k7", 1.0, None, 20, improved=False)
        k7["kept_reason"] = ("original kept, because original failed its timed run (mismatch): ...; it passes its "
                             "own check")
        json.dump(k7, open(os.path.join(d, "k7.json"), "w"))
        out = run(d)
        # k1 4x, k2 1x, k4 2x, k7 1x -> 8^(1/4); without k7: 2x over 3
        assert "geomean speedup over 4 kernels below 60% of roofline (or unprofiled): 1.682x" in out, out
        assert "of these, 1 have an original that fails its own timed run" in out and "2.000x over the other 3" in out, out
        os.remove(os.path.join(d, "k7.json"))
        assert "of these" not in run(d)

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

        # The A/B of the two search picks decides when present: kiln's pick 0.98x the exhaustive pick's speed
        # (median of 4 alternating rounds) is a 2.0% gap; 7 of 31 search measurements is 23%.
        picks = {"exhaustive": {"config": {"B": 2}, "score_ms": 1.0, "measured": 31},
                 "kiln": {"config": {"B": 4}, "score_ms": 1.5, "measured": 7}, "same": False, "case": "p9"}
        ab = {"picks": picks, "rounds": [{"round": r, "verdict": "ok", "kiln_over_exhaustive": k}
                                         for r, k in ((1, 0.97), (2, 0.99), (3, 0.98), (4, 0.5))]}
        json.dump(ab, open(os.path.join(d, "autotune_t.ab.json"), "w"))
        out = run(d)
        line = [l for l in out.splitlines() if l.startswith("t ")][0]
        assert "kiln 0.975x" in line and " 23%" in line and line.endswith("yes"), line   # 1/0.975 - 1 = 2.6%
        assert "2.6%" in line, line
        assert "picks: exhaustive B=2 | kiln B=4" in out, out
        ab["rounds"] = [dict(r, kiln_over_exhaustive=0.9) for r in ab["rounds"]]
        json.dump(ab, open(os.path.join(d, "autotune_t.ab.json"), "w"))
        line = [l for l in run(d).splitlines() if l.startswith("t ")][0]
        assert "11.1%" in line and line.endswith("no"), line
        picks["kiln"]["measured"] = 9   # 29%: over the 25% allowance
        picks["same"] = True
        json.dump(ab, open(os.path.join(d, "autotune_t.ab.json"), "w"))
        line = [l for l in run(d).splitlines() if l.startswith("t ")][0]
        assert "same pick" in line and " 29%" in line and line.endswith("no"), line
    # Re-judged as kiln judges since session 21: the original ran 3.8x slower beside the finalist on p8 than
    # in its own run while the finalist ran as alone there (chunk_delta_fwd on an H200): p8 counts 1.0x, and
    # p6 (original 2.8x slower beside, finalist 0.55x of its own time) would have been rejected: kept, 1.0x.
    with tempfile.TemporaryDirectory() as d:
        rec = lambda origin, cases, outcome="": {"origin": origin, "config": {"B": 1}, "final_outcome": outcome,
                                                 "cases": [{"name": n, "median_ms": m} for n, m in cases]}
        k = report("kd", 2.8, 0.3, 60, cases=[{"name": "p6", "speedup": 1.56, "baseline_ms": 0.22, "best_ms": 0.141},
                                              {"name": "p8", "speedup": 3.81, "baseline_ms": 0.892, "best_ms": 0.234}])
        k["candidates"] = [rec("baseline", [("p6", 0.078), ("p8", 0.2347)]), rec("rules", [("p8", 0.2341)], "won")]
        json.dump(k, open(os.path.join(d, "kd.json"), "w"))
        json.dump(report("ke", 2.0, 0.2, 40), open(os.path.join(d, "ke.json"), "w"))
        out = run(d)
        assert "over 2 kernels below 60% of roofline (or unprofiled): 2.366x" in out, out
        assert "re-judged against the original as it ran alone" in out and "1.414x over 2" in out, out
        assert "kd 2.800x -> 1.000x (p6, p8)" in out, out
        # both slower beside each other (the finalist 1.7x its own time too): the side-by-side ratio stands
        k["candidates"][1]["cases"] = [{"name": "p8", "median_ms": 0.234 / 1.7}]
        k["cases"] = [{"name": "p8", "speedup": 3.81, "baseline_ms": 0.892, "best_ms": 0.234}]
        k["candidates"][0]["cases"] = [{"name": "p8", "median_ms": 0.892 / 1.75}]
        json.dump(k, open(os.path.join(d, "kd.json"), "w"))
        assert "re-judged" not in run(d)
    # Only kernels at or above 60% of roofline: no geomean to give (not "nan").
    with tempfile.TemporaryDirectory() as d:
        json.dump(report("k9", 1.1, 0.8, 30), open(os.path.join(d, "k9.json"), "w"))
        out = run(d)
        assert "geomean speedup over 0 kernels below 60% of roofline (or unprofiled): - (none)" in out, out
        assert "nan" not in out, out
    print("summarize: ok")


SUMMARIZE = sys.argv[1]
if __name__ == "__main__":
    main()
