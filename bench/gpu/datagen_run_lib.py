#!/usr/bin/env python3
"""The parts of bench/gpu/datagen_run.sh written in Python (standard library only).

  pick RUN N OUT            N random kept samples of the compiler route (seed 19): their verify pairs -> OUT
  slim CAPTURES OUT         the capture records without their code -> OUT; prints per-origin capture figures
  table RUN REVERIFY TIMINGS PIPELINE_S PICKED
                            the run's short table: yield per stage and source, reject reasons, samples per hour
                            (kept samples over PIPELINE_S, the seconds from the start to the written outputs),
                            the re-verify (ok of the picked ones); exit 1 when a picked sample was not re-verified ok
"""
import json
import os
import random
import sys

STAGES = ("programs", "captured", "converted", "verified", "kept")


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def pick(run, n, out):
    kept = {m["id"] for m in read_lines(os.path.join(run, "sft_messages.jsonl"))}
    pairs = [p for p in read_lines(os.path.join(run, "verify_pairs.jsonl")) if p["id"] in kept]
    random.Random(19).shuffle(pairs)
    with open(out, "w") as f:
        for p in pairs[:n]:
            f.write(json.dumps(p) + "\n")


def slim(captures, out):
    recs = read_lines(captures)
    keep = ("id", "ok", "stage", "seconds", "out_of_memory", "retried_alone", "retry_skipped", "matches_eager",
            "estimate_bytes", "gpu_peak_bytes")
    with open(out, "w") as f:
        for r in recs:
            s = {k: r[k] for k in keep if k in r}
            s["error"] = (r.get("error") or "")[:300]
            f.write(json.dumps(s) + "\n")
    comp = [r for r in recs if r["id"].startswith("comp_")]
    other = [r for r in recs if not r["id"].startswith("comp_")]
    for name, rs in (("composed", comp), ("corpus", other)):
        secs = sorted(r.get("seconds", 0) for r in rs)
        print(f"capture_{name}: records {len(rs)} ok {sum(bool(r.get('ok')) for r in rs)}"
              f" oom {sum(bool(r.get('out_of_memory')) for r in rs)}"
              f" retried_alone {sum(bool(r.get('retried_alone')) for r in rs)}"
              f" median_s {secs[len(secs) // 2] if secs else 0} sum_s {round(sum(secs), 1)}")
        est = sorted((r["gpu_peak_bytes"] / r["estimate_bytes"], r["id"]) for r in rs
                     if r.get("estimate_bytes") and r.get("gpu_peak_bytes"))
        if est:
            print(f"peak_over_estimate_{name}: min {est[0][0]:.2f} median {est[len(est) // 2][0]:.2f}"
                  f" max {est[-1][0]:.2f} ({est[-1][1]}); over 1: {sum(e > 1 for e, _ in est)}")


def yield_table(counts):
    origins = sorted(counts.get("programs", {}))
    rows = ["| source | " + " | ".join(STAGES) + " |", "|---|" + "---:|" * len(STAGES)]
    for o in origins + ["all"]:
        cells = [sum(counts.get(s, {}).values()) if o == "all" else counts.get(s, {}).get(o, 0) for s in STAGES]
        rows.append(f"| {o} | " + " | ".join(str(c) for c in cells) + " |")
    return rows


def not_started_line(rejects):
    """The programs no capture was recorded for (the capture deadline left them unstarted), per source."""
    left = {}
    for r in rejects:
        if r.get("stage") == "capture" and r.get("reason") == "not_captured":
            left[r.get("origin", "?")] = left.get(r.get("origin", "?"), 0) + 1
    total = sum(left.values())
    per = ", ".join(f"{o} {n}" for o, n in sorted(left.items()))
    return f"not started by the capture deadline: {total}" + (f" ({per}): NOT ALL CAPTURED" if total else "")


def table(run, reverify, timings, pipeline_s, picked_path):
    summary = {}
    if os.path.exists(os.path.join(run, "summary.json")):
        with open(os.path.join(run, "summary.json")) as f:
            summary = json.load(f)
    counts = summary.get("counts", {})
    out = ["## kiln datagen run", ""]
    out += yield_table(counts)
    reasons = {}
    for r in read_lines(os.path.join(run, "rejects.jsonl")):
        key = f"{r.get('stage')}:{r.get('reason')}"
        reasons[key] = reasons.get(key, 0) + 1
    out += ["", "rejects: " + (", ".join(f"{k} {v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1]))
                               or "none")]
    out.append(not_started_line(read_lines(os.path.join(run, "rejects.jsonl"))))
    pairs = read_lines(os.path.join(run, "verify_pairs.jsonl"))
    results = read_lines(os.path.join(run, "verify.jsonl"))
    out.append(f"verification: {len(results)} results of {len(pairs)} candidates"
               + ("" if len(results) >= len(pairs) else f" ({len(pairs) - len(results)} NOT VERIFIED)"))
    kept = sum(counts.get("kept", {}).values())
    rate = kept * 3600.0 / pipeline_s if pipeline_s > 0 else 0.0
    out.append(f"samples per hour: {kept} kept in {pipeline_s} s from start to outputs = {rate:.0f}/hour")
    picked = [p["id"] for p in read_lines(picked_path)]
    verdicts = {r["id"]: r.get("verdict", "error") for r in read_lines(reverify)}
    ok = sum(verdicts.get(i) == "ok" for i in picked)
    bad = [f"{i} ({verdicts.get(i, 'no result')})" for i in picked if verdicts.get(i) != "ok"]
    out.append(f"re-verify (separate kiln eval, seed 4242): {ok} ok of {len(picked)} picked"
               + (": " + ", ".join(bad[:10]) if bad else ""))
    if os.path.exists(timings):
        with open(timings) as f:
            out += ["", "timings:"] + ["  " + l.rstrip() for l in f if l.strip()]
    print("\n".join(out))
    return 0 if picked and ok == len(picked) else 1


def main(argv):
    if len(argv) == 5 and argv[1] == "pick":
        pick(argv[2], int(argv[3]), argv[4])
        return 0
    if len(argv) == 4 and argv[1] == "slim":
        slim(argv[2], argv[3])
        return 0
    if len(argv) == 7 and argv[1] == "table":
        return table(argv[2], argv[3], argv[4], int(argv[5]), argv[6])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
