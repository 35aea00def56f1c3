"""bench/optimize_suite/search_picks.py: each search's pick is its best fixed configuration by its own timings
(not the autotuned original, not verification's per-shape autotune, nothing that failed), its source comes
from the records database, and only the search's own measurements count."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile


def cand(origin, cfg, ms, verdict="ok", h=None):
    return {"origin": origin, "config": cfg, "score_ms": ms, "verdict": verdict, "source_hash": h or f"h{cfg['B']}",
            "cases": [{"name": "perf_3", "median_ms": ms}]}


def main(script):
    with tempfile.TemporaryDirectory() as d:
        db = os.path.join(d, "kiln.db")
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE candidates (hash TEXT PRIMARY KEY, name TEXT, source TEXT NOT NULL, created_at TEXT NOT NULL)")
        for b in (1, 2, 4, 8):
            con.execute("INSERT INTO candidates VALUES (?, 'x.py', ?, 'now')", (f"h{b}", f"B = {b}\n"))
        con.commit()
        ex = {"candidates": [cand("baseline", {"B": 1}, 0.5, h="h1"),            # the autotuned original: no pick
                             cand("exhaustive", {"B": 2}, 1.0), cand("exhaustive", {"B": 4}, 0.9),
                             cand("exhaustive", {"B": 8}, 0.1, verdict="mismatch"),  # wrong: no pick
                             cand("exhaustive", {"B": 8}, None, verdict="pruned"),
                             cand("per-shape autotune", {"B": 2}, 0.2)]}
        kj = {"candidates": [cand("baseline", {"B": 1}, 0.5, h="h1"), cand("coordinate", {"B": 2}, 1.0),
                             cand("coordinate", {"B": 8}, 2.0, verdict="skipped")]}
        paths = []
        for name, rep in (("ex", ex), ("kj", kj)):
            paths.append(os.path.join(d, name + ".json"))
            json.dump(rep, open(paths[-1], "w"))
        out = os.path.join(d, "picks")
        p = subprocess.run([sys.executable, script, *paths, db, out], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        j = json.loads(p.stdout)
        assert j["exhaustive"]["config"] == {"B": 4} and j["kiln"]["config"] == {"B": 2}, j
        assert j["exhaustive"]["measured"] == 3 and j["kiln"]["measured"] == 1, j   # search measurements only
        assert j["same"] is False and j["case"] == "perf_3", j
        assert open(os.path.join(out, "exhaustive_pick.py")).read() == "B = 4\n"
        assert open(os.path.join(out, "kiln_pick.py")).read() == "B = 2\n"
        # a pick whose source is not recorded: a clear error, exit 2
        kj["candidates"][1]["source_hash"] = "missing"
        json.dump(kj, open(paths[1], "w"))
        p = subprocess.run([sys.executable, script, *paths, db, out], capture_output=True, text=True)
        assert p.returncode == 2 and "not in" in p.stderr, (p.returncode, p.stderr)
    print("search_picks: ok")


if __name__ == "__main__":
    main(sys.argv[1])
