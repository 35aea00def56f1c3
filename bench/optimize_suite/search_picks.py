"""The autotuner comparison's two search picks, as sources for an A/B run (bench/optimize_suite/run.sh).

Each search's pick is its best fixed configuration by its own search timings: the candidate with the
lowest score among those that ran ok, not the original (an autotuned original picks its config anew in
every process, so it is no configuration of the grid) and not the per-shape autotune of verification.
Both sources come from the records database both runs wrote (kiln optimize --db: every measured source
is stored by hash).

  python3 search_picks.py EXHAUSTIVE.json KILN.json DB OUTDIR
writes OUTDIR/exhaustive_pick.py and OUTDIR/kiln_pick.py and prints one JSON line:
  {"exhaustive": {"config": ..., "score_ms": ..., "measured": N}, "kiln": {...}, "same": bool, "case": NAME}
(`measured`: the search's own measurements, the original's and verification's not counted.) Exit 2 when a
side has no pick or its source is not in the database.
"""
import json
import os
import sqlite3
import sys

NOT_SEARCH = ("baseline", "per-shape autotune")


def key(cfg):
    return " ".join(f"{k}={v}" for k, v in sorted((cfg or {}).items()))


def search_measured(report):
    """The search's own timed measurements: candidates that ran (not pruned, not skipped, not failed to
    render), the original's baseline and verification's per-shape candidate excluded."""
    return sum(1 for c in report.get("candidates", [])
               if c.get("origin") not in NOT_SEARCH and c.get("verdict") not in ("pruned", "skipped", "render_error"))


def pick(report):
    best = None
    for c in report.get("candidates", []):
        if c.get("origin") in NOT_SEARCH or c.get("verdict") != "ok" or c.get("score_ms") is None:
            continue
        if best is None or c["score_ms"] < best["score_ms"]:
            best = c
    return best


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    ex, kj = (json.load(open(p)) for p in argv[1:3])
    db = sqlite3.connect(argv[3])
    os.makedirs(argv[4], exist_ok=True)
    out = {}
    for side, rep in (("exhaustive", ex), ("kiln", kj)):
        c = pick(rep)
        if c is None:
            print(f"search_picks: the {side} search has no measured configuration", file=sys.stderr)
            return 2
        row = db.execute("SELECT source FROM candidates WHERE hash = ?", (c["source_hash"],)).fetchone()
        if row is None:
            print(f"search_picks: source {c['source_hash']} of the {side} pick is not in {argv[3]}", file=sys.stderr)
            return 2
        with open(os.path.join(argv[4], f"{side}_pick.py"), "w") as f:
            f.write(row[0])
        out[side] = {"config": c["config"], "score_ms": c["score_ms"], "measured": search_measured(rep),
                     "source_hash": c["source_hash"]}
    out["same"] = key(out["exhaustive"]["config"]) == key(out["kiln"]["config"])
    case = next((c["cases"][0]["name"] for c in ex.get("candidates", []) if c.get("cases")), None)
    out["case"] = case
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
