#!/usr/bin/env python3
"""What `kiln optimize` could reach on each module of one part of the issue-21 suite, without a GPU.

For every module of the part (generalization_split.py's rule), every launched kernel's tunables
(`kiln_rewrite_apply --tunables`): the block-size constexprs (powers of two, launch options left out)
that are editable and those that stay fixed, with the reason. A module's row is its kernel with the most
editable block sizes (how optimize picks the kernel when none is named). The summary counts the modules
with at least one editable block size and groups the reasons for fixed ones. Static only: it says what
the search space can hold, not what a search would win.

usage: static_reach.py KILN KILN_REWRITE_APPLY CORPUS PART [--json rows.jsonl]
       PART: dev | held   (KILN_PYTHON, or this interpreter, runs generalization_split.py)
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

OPTIONS = {"num_warps", "num_stages", "num_ctas", "maxnreg"}
LINE = re.compile(r"(\S+)\s+site=(\S+)\s+value=(\S+)\s+editable=(\d) pow2=(\d)\s+in_grid=\d grid_follows=\d\s*(.*)")


def part_modules(corpus, part):
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, os.path.join(here, "generalization_split.py"), corpus],
                         capture_output=True, text=True, check=True).stdout
    return sorted(l.split()[0] for l in out.splitlines() if len(l.split()) >= 2 and l.split()[1] == part)


def tunables(tool, path, kernel):
    out = subprocess.run([tool, "--tunables", path, kernel], capture_output=True, text=True).stdout
    editable, fixed = [], []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        name, site, _value, ed, pow2, why = m.groups()
        if name in OPTIONS or pow2 != "1":
            continue
        (editable if ed == "1" else fixed).append({"name": name, "site": site, "why": why.strip()})
    return editable, fixed


def module_row(kiln, tool, path):
    name = os.path.basename(path)[:-3]
    an = subprocess.run([kiln, "analyze", "--json", path], capture_output=True, text=True)
    try:
        mods = json.loads(an.stdout)["modules"]
    except (ValueError, KeyError):
        return {"module": name, "kernel": None, "error": (an.stderr.strip().splitlines() or ["no output"])[-1]}
    best = None
    for k in (k["name"] for m in mods for k in m.get("kernels", []) if k.get("launched")):
        editable, fixed = tunables(tool, path, k)
        if best is None or len(editable) > len(best["editable"]):
            best = {"module": name, "kernel": k, "editable": editable, "fixed": fixed}
    return best or {"module": name, "kernel": None, "error": "no launched kernel"}


def reason_class(why):
    # "computed at run time (min(K, 32)); 'BK' is also read ..." -> its first clause without the specifics
    first = why.split(":")[0].split("; ")[-1]
    return re.sub(r"\(.*", "", re.sub(r"'[^']*'", "'X'", first)).strip()[:80]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kiln")
    ap.add_argument("tool")
    ap.add_argument("corpus")
    ap.add_argument("part", choices=["dev", "held"])
    ap.add_argument("--json")
    a = ap.parse_args()
    kernels = os.path.join(a.corpus, "tritonbench", "G", "kernels")
    rows = [module_row(a.kiln, a.tool, os.path.join(kernels, n + ".py")) for n in part_modules(a.corpus, a.part)]
    reasons = collections.Counter()
    for r in rows:
        if r.get("kernel") is None:
            print("%-30s error: %s" % (r["module"], r["error"]))
            continue
        fixed = "; ".join("%s: %s" % (f["name"], f["why"][:100]) for f in r["fixed"])
        print("%-30s %-38s editable %-24s %s" % (r["module"], r["kernel"],
                                                 ",".join(e["name"] for e in r["editable"]) or "-", fixed))
        for f in r["fixed"]:
            reasons[reason_class(f["why"])] += 1
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    reach = sum(1 for r in rows if r.get("editable"))
    print("\n%s: %d of %d modules have an editable block size on their kernel" % (a.part, reach, len(rows)))
    print("fixed block sizes by reason:")
    for why, n in reasons.most_common():
        print("  %3d  %s" % (n, why))


if __name__ == "__main__":
    main()
