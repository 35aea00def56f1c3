"""The table of bench/gpu/datagen_dynamic.sh: per program of a `kiln datagen --dynamic-shapes` run, its operators,
its kernels' grid types, the conversion's outcome and the shapes it was verified at; then the yield per stage (and
the static run's, when one ran over the same programs).

usage: datagen_dynamic_table.py RUN_DIR [STATIC_RUN_DIR]
"""
import json
import os
import re
import sys


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def grid_types(capture):
    codes = capture.get("codes") or [""]
    return sorted(set(re.findall(r"'grid_type': '(\w+)'", codes[0])))


def summary(run):
    programs = lines(os.path.join(run, "programs.jsonl"))
    captures = {c["id"]: c for c in lines(os.path.join(run, "captures.jsonl"))}
    rejects = {}
    for r in lines(os.path.join(run, "rejects.jsonl")):
        rejects.setdefault(r["id"], r)
    verify = {v["id"]: v for v in lines(os.path.join(run, "verify.jsonl"))}
    kept = {m["id"]: m.get("meta", {}) for m in lines(os.path.join(run, "sft_messages.jsonl"))}
    rows = []
    for p in programs:
        pid = p["id"]
        cap = captures.get(pid, {})
        shapes = sorted(k.split("@", 1)[1] for k in verify if k.startswith(pid + "@"))
        if pid in kept:
            outcome = f"kept, {kept[pid].get('shapes_verified', 1)} shapes"
        elif pid in rejects:
            r = rejects[pid]
            outcome = f"{r['stage']}: {r['reason']}"
        else:
            outcome = "not reached"
        rows.append({"id": pid, "ops": ",".join(p.get("ops", [])), "grids": ",".join(grid_types(cap)) or "-",
                     "captured": bool(cap.get("ok")), "outcome": outcome, "extra_shapes": shapes})
    return rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = summary(sys.argv[1])
    print(f"{'program':<16} {'grid types':<32} {'outcome':<40} operators")
    for r in rows:
        print(f"{r['id']:<16} {r['grids'][:32]:<32} {r['outcome'][:40]:<40} {r['ops']}")
    n = len(rows)
    captured = sum(r["captured"] for r in rows)
    kept = [r for r in rows if r["outcome"].startswith("kept")]
    multi = sum(1 for r in kept if not r["outcome"].startswith("kept, 1 "))
    print(f"\ndynamic: {n} programs, {captured} captured, {len(kept)} kept ({multi} verified at more than one shape)")
    reasons = {}
    for r in rows:
        if not r["outcome"].startswith("kept"):
            reasons[r["outcome"]] = reasons.get(r["outcome"], 0) + 1
    for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  {v:3d}  {k}")
    if len(sys.argv) > 2:
        static = summary(sys.argv[2])
        skept = sum(1 for r in static if r["outcome"].startswith("kept"))
        print(f"static (same programs): {len(static)} programs, {sum(r['captured'] for r in static)} captured, "
              f"{skept} kept (1 shape each)")


if __name__ == "__main__":
    main()
