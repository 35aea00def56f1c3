#!/usr/bin/env python3
"""Summarizes a `kiln eval --batch` results file: verdict counts, then every pair that is not ok.

    python3 bench/gpu/summarize_verdicts.py RESULTS.jsonl [TITLE]
"""
import collections
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
title = sys.argv[2] if len(sys.argv) > 2 else "TritonBench-G self-eval"
c = collections.Counter(r.get("verdict") or ("error" if r.get("error") else "?") for r in rows)
print(f"{title}:", len(rows), "modules;", dict(c))
for r in rows:
    if r.get("verdict") != "ok":
        res = r.get("result") or {}
        print("  ", r.get("id"), r.get("verdict"), (res.get("message") or r.get("error") or "")[:200])
