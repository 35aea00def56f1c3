#!/usr/bin/env python3
"""Turns the folders of tritonbench_g_time_shard.sh calls into a CI replay recording (replay_gpu.sh):

    python3 bench/gpu/tritonbench_g_time_to_replay.py [--leave-out A,B] DEST SHARD_DIR [SHARD_DIR ...]

Each SHARD_DIR holds result_K.jsonl and transcript_K.jsonl (an untarred $OUT/shard); a later folder's
file of the same name replaces an earlier one's (a resumed call's files hold the earlier lines too); a module
with results in several batches keeps the last (in the files' name order) and only that batch's exchanges. Writes DEST/pairs.jsonl (tasks relative to DEST, as a
checkout sees the corpus at ../shared/corpus), DEST/expected.jsonl (one result line per module, its
`line` and `index` renumbered to the pairs file) and DEST/transcript.jsonl (every recorded exchange).
A module whose pair has no recorded eval answer (a worker killed at its limit) is left out, and said;
--leave-out names more (e.g. an out-of-memory caused by other batches sharing the GPU: the runner's retry
of a worker's out-of-memory error is not replayed, so it replays as an error line, not as its verdict).
"""
import glob
import json
import os
import sys

CORPUS_REL = "../../../../../shared/corpus/tritonbench/G/kernels"


def main():
    args = sys.argv[1:]
    leave_out = set()
    if args and args[0] == "--leave-out":
        leave_out, args = set(args[1].split(",")), args[2:]
    dest, dirs = args[0], args[1:]
    # a resumed call's files hold the earlier call's lines too: the last folder's file of a name is taken
    files = {}
    for d in dirs:
        for f in glob.glob(os.path.join(d, "result_*.jsonl")) + glob.glob(os.path.join(d, "transcript_*.jsonl")):
            files[os.path.basename(f)] = f
    results, exchanges, answered, source = {}, [], set(), {}
    for f in sorted(v for k, v in files.items() if k.startswith("result_")):
        for line in open(f):
            try:
                r = json.loads(line)
            except ValueError:
                continue   # a line cut off by the command's limit
            if r.get("id"):
                results[r["id"]] = r
                source[r["id"]] = os.path.basename(f)[len("result_"):]
    for f in sorted(v for k, v in files.items() if k.startswith("transcript_")):
        for line in open(f):
            try:
                x = json.loads(line)
            except ValueError:
                continue
            task = x.get("request", {}).get("task")
            name = task["name"].rsplit("/", 1)[-1] if isinstance(task, dict) and task.get("name") else None
            if name in leave_out:
                continue
            # a module evaluated in several batches (re-run in a later call): only the exchanges of the batch
            # whose result is kept, else the replay answers with the earlier batch's
            if name in source and source[name] != os.path.basename(f)[len("transcript_"):]:
                continue
            if name:
                answered.add(name)
            exchanges.append(line if line.endswith("\n") else line + "\n")
    os.makedirs(dest, exist_ok=True)
    kept = [k for k in sorted(results) if k in answered and k not in leave_out]
    for k in sorted(set(results) - set(kept)):
        why = "named by --leave-out" if k in leave_out else "no recorded answer"
        print(f"left out {k}: {results[k].get('verdict')}, {why}", file=sys.stderr)
    with open(os.path.join(dest, "pairs.jsonl"), "w") as p, open(os.path.join(dest, "expected.jsonl"), "w") as e:
        for i, k in enumerate(kept):
            p.write(json.dumps({"id": k, "task": f"{CORPUS_REL}/{k}.py", "candidate": None}) + "\n")
            r = dict(results[k], index=i, line=i + 1, task=f"{CORPUS_REL}/{k}.py")
            r.pop("pair_hash", None)   # the pairs file is new: its hash differs
            e.write(json.dumps(r, separators=(",", ":")) + "\n")
    with open(os.path.join(dest, "transcript.jsonl"), "w") as t:
        t.writelines(exchanges)
    print(f"{len(kept)} modules, {len(exchanges)} exchanges -> {dest}")


if __name__ == "__main__":
    main()
