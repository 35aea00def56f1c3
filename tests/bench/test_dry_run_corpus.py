"""bench/new_user/dry_run_corpus.py: a module whose dry run ends with exit 0 and a report is `checked`;
one that stops with an `error:` line is `error` (a clear refusal); a crash, a hang, or an exit without
an error line is a `bug`, and any bug makes the script exit 1. A stand-in kiln acts by module name."""
import json
import os
import subprocess
import sys
import tempfile

FAKE = r'''#!/usr/bin/env python3
import json, os, signal, sys, time
path = sys.argv[2]
name = os.path.basename(path)[:-3]
js = sys.argv[sys.argv.index("--json") + 1]
assert sys.argv[1] == "optimize" and "--dry-run" in sys.argv, sys.argv
if name == "good":
    json.dump({"kernel": "k", "candidates": [{"verdict": "ok"}, {"verdict": "mismatch"}]}, open(js, "w"))
elif name == "refused":
    print("kiln optimize: error: the original kernel does not pass its own check (crash)", file=sys.stderr)
    sys.exit(1)
elif name == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
elif name == "hang":
    time.sleep(30)
elif name == "silent":
    sys.exit(2)
elif name == "noreport":
    sys.exit(0)
'''


def main(script):
    with tempfile.TemporaryDirectory() as d:
        kiln = os.path.join(d, "kiln")
        with open(kiln, "w") as fh:
            fh.write(FAKE)
        os.chmod(kiln, 0o755)
        corpus = os.path.join(d, "corpus")
        os.mkdir(corpus)
        for n in ("good", "refused", "crash", "hang", "silent", "noreport"):
            open(os.path.join(corpus, n + ".py"), "w").write("# module\n")
        rows = os.path.join(d, "rows.jsonl")
        p = subprocess.run([sys.executable, script, kiln, corpus, "--timeout", "3", "--jobs", "3", "--out", rows],
                           capture_output=True, text=True, timeout=120)
        print(p.stdout, p.stderr)
        got = {r["module"]: r for r in map(json.loads, open(rows))}
        want = {"good": "checked", "refused": "error", "crash": "bug", "hang": "bug", "silent": "bug",
                "noreport": "bug"}
        bad = [f"{n}: {got.get(n, {}).get('verdict')} (want {v})" for n, v in want.items()
               if got.get(n, {}).get("verdict") != v]
        if got["good"].get("verdicts") != ["mismatch", "ok"]:
            bad.append(f"good: verdicts {got['good'].get('verdicts')}")
        if "signal 11" not in got["crash"].get("why", ""):
            bad.append(f"crash: why {got['crash'].get('why')!r}")
        if p.returncode != 1:
            bad.append(f"exit {p.returncode}, want 1")
        if bad:
            print("FAIL:", *bad, sep="\n  ")
            return 1
        print("dry_run_corpus: ok")
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
