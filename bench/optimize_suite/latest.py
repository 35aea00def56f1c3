"""Gathers the generalization suite's reports that count (issue 21) into one directory per part, for
summarize.py: `latest.py RESULTS OUT` writes OUT/dev/<module>.json and OUT/held/<module>.json and prints
where each came from.

RESULTS holds the runs: `<part>.<module>.json` at its top (the first sessions' runs) and in session
folders `sN` (a suffix after the number, as `s18r`, sorts after `sN`), in the order they ran.
- Development: each module's latest run.
- Held aside (bench/optimize_suite/generalization_split.md): each module's first run; a later run of a
  held-aside module counts with the development part (its latest one there).
"""
import json
import os
import re
import shutil
import sys


def session_order(name):
    """Sort key of a results folder: the top folder first, then sN by number, a suffix after its number."""
    if name == ".":
        return (-1, "")
    m = re.fullmatch(r"s(\d+)(.*)", name)
    return (int(m.group(1)), m.group(2)) if m else None


def gather(results):
    """-> {(part, module): [path, ...]} in the order the runs were made."""
    dirs = ["."] + [d for d in os.listdir(results)
                    if os.path.isdir(os.path.join(results, d)) and session_order(d) is not None]
    dirs.sort(key=session_order)
    runs = {}
    for d in dirs:
        folder = os.path.join(results, d)
        for f in sorted(os.listdir(folder)):
            m = re.fullmatch(r"(dev|held)\.(.+)\.json", f)
            if m:
                runs.setdefault((m.group(1), m.group(2)), []).append(os.path.join(folder, f))
    return runs


def choose(runs):
    """-> {part: {module: path}} by the rule above."""
    out = {"dev": {}, "held": {}}
    for (part, module), paths in runs.items():
        if part == "dev":
            out["dev"][module] = paths[-1]
        else:
            out["held"][module] = paths[0]
            if len(paths) > 1:
                out["dev"][module] = paths[-1]
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: latest.py RESULTS OUT", file=sys.stderr)
        return 2
    results, out = sys.argv[1], sys.argv[2]
    if not os.path.isdir(results):
        print(f"latest.py: {results}: not a directory", file=sys.stderr)
        return 2
    chosen = choose(gather(results))
    for part, mods in chosen.items():
        d = os.path.join(out, part)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        for module, path in sorted(mods.items()):
            try:
                json.load(open(path))
            except (OSError, ValueError) as e:
                print(f"{path}: unreadable ({e})", file=sys.stderr)
                return 1
            shutil.copyfile(path, os.path.join(d, module + ".json"))
        later = sorted(m for m in mods if part == "dev" and m in chosen["held"])
        print(f"{part}: {len(mods)} modules" + (f" (with the later runs of held-aside {', '.join(later)})"
                                                if later else ""))
        for module, path in sorted(mods.items()):
            print(f"  {module}: {os.path.relpath(path, results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
