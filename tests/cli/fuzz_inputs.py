#!/usr/bin/env python3
"""Seeded, time-bounded fuzz of what kiln reads besides candidates (issue 15): pairs files through
`kiln eval --batch` and task files, kiln task manifests and --size values through task loading. No worker runs: batches answer
from a replay transcript or have no worker, single evaluations get a candidate the static checks reject.

Asserts, for every input: no death by a signal (abort, SIGSEGV), no hang, an exit code of 0, 1 or 2, and on
2 a message (`kiln CMD: ...` or `...error...`), never kiln's `internal error`. A failing input is written to the temporary directory's `failures/` and
printed, with the seed that reproduces the run.

usage: fuzz_inputs.py KILN [--seed N] [--seconds S]   (defaults: seed 15, 40 s; env KILN_FUZZ_KEEP=DIR keeps
       the failing inputs there)
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RELU = os.path.join(ROOT, "tests", "candidates", "tasks", "relu.py")
REPLAY = os.path.join(ROOT, "tests", "eval", "data", "replay_relu.jsonl")
RELU_CAND = os.path.join(ROOT, "tests", "eval", "data", "relu_candidate.py")
PAIR_KEYS = ["task", "candidate", "source", "name", "id", "mode", "policy", "trials", "seed", "timeout_s",
             "sizes", "format", "entry", "bench", "baseline"]
ODD_VALUES = [None, True, False, 0, -1, 1.5, float("1e308"), 2 ** 70, -2 ** 63, "", "turbo", "many", "\u00e9\u4e2d",
              [], [1, 2], {}, {"a": {"b": []}}, "../../../etc/passwd", "x" * 5000]


def mutate_bytes(rng, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        if op < 0.3 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.5:
            b[rng.randrange(len(b) + 1):rng.randrange(len(b) + 1)] = bytes(rng.randrange(256) for _ in range(
                rng.randint(1, 16)))
        elif op < 0.7 and b:
            del b[rng.randrange(len(b)):]
        elif op < 0.85 and b:
            i = rng.randrange(len(b))
            b[i:i] = b[i:i + rng.randint(1, 64)] * rng.randint(1, 50)
        else:
            b += rng.choice([b"\x00", b"\xff\xfe", b"\r", b"\n\n", b"{", b"\"", b"[" * 3000 + b"]" * 3000])
    return bytes(b)


def pair_line(rng, cand, tmp):
    p = {"task": RELU, "candidate": cand}
    r = rng.random()
    if r < 0.35:
        p[rng.choice(PAIR_KEYS)] = rng.choice(ODD_VALUES)
    elif r < 0.5:
        p[f"unknown_{rng.randrange(5)}"] = rng.choice(ODD_VALUES)
    elif r < 0.6:
        p["id"] = rng.choice(["a", "b", 1])   # duplicates across lines
    elif r < 0.7:
        p["source"] = open(RELU_CAND).read()[:rng.randrange(2000)]
    elif r < 0.8:
        p["sizes"] = {rng.choice(["batch_size", "dim", "nope"]): rng.choice(ODD_VALUES)}
    text = json.dumps(p, allow_nan=True)
    if rng.random() < 0.3:
        text = mutate_bytes(rng, text.encode()).decode("latin-1")
    return text


def run(kiln, args, cwd, timeout=20):
    t0 = time.monotonic()
    try:
        p = subprocess.run([kiln] + args, capture_output=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return f"hang (> {timeout} s)", time.monotonic() - t0
    err = p.stderr.decode(errors="replace")
    if p.returncode < 0 or p.returncode >= 128:
        return f"died (rc {p.returncode}): {err[-800:]}", time.monotonic() - t0
    if p.returncode not in (0, 1, 2):
        return f"exit {p.returncode}: {err[-800:]}", time.monotonic() - t0
    if p.returncode == 2 and not ("error" in err or err.startswith("kiln ")) or "internal error" in err:
        return f"exit 2 without a clear message: {err[-800:]!r}", time.monotonic() - t0
    return None, time.monotonic() - t0


def main():
    args = sys.argv[1:]
    kiln = os.path.abspath(args[0])
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 15
    seconds = float(args[args.index("--seconds") + 1]) if "--seconds" in args else 40.0
    rng = random.Random(seed)
    failures = []
    n = 0
    end = time.monotonic() + seconds
    keep_dir = os.environ.get("KILN_FUZZ_KEEP")   # a directory to keep the failing inputs in
    with tempfile.TemporaryDirectory(prefix="kiln-fuzz-") as tmp:
        os.makedirs(os.path.join(tmp, "failures"))
        rejected = os.path.join(tmp, "thread.py")
        with open(rejected, "w") as f:
            f.write("import torch\nimport threading\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n\n"
                    "class ModelNew:\n    pass\n")
        relu_src = open(RELU, "rb").read()
        while time.monotonic() < end:
            n += 1
            kind = rng.choice(["pairs", "pairs", "task", "size", "manifest"])
            if kind == "pairs":
                lines = [pair_line(rng, rng.choice([rejected, RELU_CAND]), tmp) for _ in range(rng.randint(1, 6))]
                data = ("\n".join(lines) + rng.choice(["\n", ""])).encode("utf-8", "surrogateescape")
                if rng.random() < 0.2:
                    data = mutate_bytes(rng, data)
                path = os.path.join(tmp, f"p{n}.jsonl")
                with open(path, "wb") as f:
                    f.write(data)
                # answered from a replay, or with no worker at all (a worker that cannot start)
                src = ["--replay", REPLAY] if rng.random() < 0.5 else ["--python", "/nonexistent/python3"]
                cmd = ["eval", "--batch", path, "--out", os.path.join(tmp, f"o{n}.jsonl"), "--no-db",
                       "--quiet"] + src
            elif kind == "task":
                path = os.path.join(tmp, f"t{n}.py")
                with open(path, "wb") as f:
                    f.write(mutate_bytes(rng, relu_src))
                cmd = ["eval", "--task", path, "--candidate", rejected, "--python", "/nonexistent/python3", "--no-db"]
            elif kind == "manifest":  # a kiln task manifest with odd values
                m = {"module": "m.py", "entry": "f", "bench": "b.py"}
                for _ in range(rng.randint(1, 3)):
                    m[rng.choice(["module", "entry", "bench", "name", "sizes", "other"])] = rng.choice(ODD_VALUES)
                path = os.path.join(tmp, f"m{n}.json")
                data = json.dumps(m).encode()
                with open(path, "wb") as f:
                    f.write(mutate_bytes(rng, data) if rng.random() < 0.3 else data)
                cmd = ["eval", "--task", path, "--python", "/nonexistent/python3", "--no-db"]
            else:
                path = RELU
                value = rng.choice([str(rng.choice(ODD_VALUES)), "1e999", "-0", "(", "[[]]", "9" * 400, "1,2",
                                    "\"s\"", "nan", "inf"])
                cmd = ["eval", "--task", RELU, "--candidate", rejected, "--python", "/nonexistent/python3", "--no-db",
                       "--size", f"{rng.choice(['batch_size', 'dim', 'x', ''])}={value}"]
            what, _ = run(kiln, cmd, tmp)
            if what:
                keep = os.path.join(tmp, "failures", f"{n}_{os.path.basename(path)}")
                if path != RELU:
                    with open(path, "rb") as src, open(keep, "wb") as dst:
                        dst.write(src.read())
                failures.append((n, kind, " ".join(cmd), what))
                if keep_dir and path != RELU:
                    os.makedirs(keep_dir, exist_ok=True)
                    with open(path, "rb") as src, open(os.path.join(keep_dir, os.path.basename(keep)), "wb") as dst:
                        dst.write(src.read())
        print(f"fuzz: seed {seed}: {n} inputs in {seconds:.0f} s, {len(failures)} failure(s)")
        kinds = {}
        for f_ in failures:
            key = f_[3].split("\n")[0][:100]
            kinds[key] = kinds.get(key, 0) + 1
        for key, count in sorted(kinds.items(), key=lambda kv: -kv[1]):
            print(f"  {count:5d} x {key}")
        first_of_kind = {}
        for f_ in failures:
            first_of_kind.setdefault(f_[3].split("\n")[0][:100], f_)
        for n_, kind, cmd, what in list(first_of_kind.values())[:10]:
            print(f"  #{n_} {kind}: kiln {cmd}\n    {what}")
            if kind != "size":
                print("    input: " + open(os.path.join(tmp, "failures", sorted(
                    x for x in os.listdir(os.path.join(tmp, "failures")) if x.startswith(f"{n_}_"))[0]),
                    "rb").read()[:600].decode(errors="replace").replace("\n", "\n           "))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
