#!/usr/bin/env python3
"""Summarizes a `kiln eval --batch --mode time` results file of modules timed against themselves:
verdict counts, the check stage's verdicts, the timing methods, then every module that is not ok with its
reason codes and where it failed (check stage or timing stage).

    python3 bench/gpu/summarize_time_sweep.py RESULTS.jsonl [...]     (later files override earlier ones)
"""
import collections
import json
import sys


def load(paths):
    rows = {}
    for p in paths:
        for line in open(p):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue   # a line cut off by the command's limit
            rows[r.get("id") or r.get("task")] = r
    return rows


def stage(r):
    res = r.get("result") or {}
    for w in res.get("warnings") or []:
        if w.get("code") == "check_stage":   # decided by a check worker, or re-run whole and alone
            return "check" if (w.get("message") or "").startswith("decided") else "whole"
    return "time" if res.get("check_stage") else "whole"


def main():
    rows = load(sys.argv[1:])
    verdicts = collections.Counter(r.get("verdict") or "error" for r in rows.values())
    methods = collections.Counter()
    for r in rows.values():
        for c in (r.get("result") or {}).get("cases") or []:
            if c.get("timing_method"):
                methods[c["timing_method"]] += 1
    print(f"{len(rows)} modules: {dict(sorted(verdicts.items()))}")
    print(f"timing methods (cases): {dict(sorted(methods.items()))}")
    for k in sorted(rows):
        r = rows[k]
        if r.get("verdict") == "ok":
            continue
        res = r.get("result") or {}
        codes = [x.get("code") for x in res.get("reasons") or [] if x.get("severity", "error") == "error"]
        msg = (res.get("message") or r.get("error") or "").replace("\n", " ")
        print(f"  {k}: {r.get('verdict') or 'error'} [{stage(r)}] {','.join(codes)} {msg[:300]}")


if __name__ == "__main__":
    main()
