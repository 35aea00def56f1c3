#!/usr/bin/env python3
"""The samples of `kiln bench` result files that are not ok, one line each: id, verdict (or `error`), the first
reason (code and message) and whether TritonBench's legacy stdout check passed it; then the verdict counts.
Used by the GPU jobs' summaries (bench/gpu/bench2_gpu.sh) and to write bench/results/ tables.

    bench_nonok.py RESULTS.jsonl...   (a missing file is reported, not an error)
"""
import collections
import json
import os
import sys


def reason_of(line: dict) -> str:
    res = line.get("result") or {}
    reasons = res.get("reasons") or []
    if reasons:
        r = reasons[0]
        return f"{r.get('code')}: {r.get('message', '')}"
    return line.get("error") or res.get("error") or ""


def main(paths):
    for path in paths:
        if not os.path.exists(path):
            print(f"{path}: missing")
            continue
        counts = collections.Counter()
        for text in open(path, encoding="utf-8"):
            if not text.strip():
                continue
            line = json.loads(text)
            verdict = line.get("verdict") or "error"
            counts[verdict] += 1
            if verdict == "ok":
                continue
            legacy = ((line.get("result") or {}).get("legacy_stdout") or {}).get("passed")
            print(f"  {line.get('id')}: {verdict}; {reason_of(line)[:160]}; legacy stdout passed: {legacy}")
        print(f"{path}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
