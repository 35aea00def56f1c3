"""bench/optimize_suite/latest.py on a synthetic results tree: development modules take their latest run
(session folders in numeric order, s18r after s18, the top folder first), held-aside modules their first,
and a held-aside module's later run counts with development."""
import json
import os
import subprocess
import sys
import tempfile

LATEST = sys.argv[1]


def put(root, folder, name, speedup):
    d = os.path.join(root, folder)
    os.makedirs(d, exist_ok=True)
    json.dump({"task": name, "geomean_speedup": speedup}, open(os.path.join(d, name + ".json"), "w"))


def speedup(out, part, module):
    return json.load(open(os.path.join(out, part, module + ".json")))["geomean_speedup"]


def main():
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as out:
        put(root, ".", "dev.a", 1.0)
        put(root, "s9", "dev.a", 2.0)
        put(root, "s10", "dev.a", 3.0)   # s10 after s9 (numeric, not text order)
        put(root, "s18", "dev.b", 1.5)
        put(root, "s18r", "dev.b", 1.7)  # a re-run folder after its session
        put(root, ".", "held.h", 1.1)
        put(root, "s12", "held.h", 2.2)
        put(root, "s11", "held.g", 1.3)
        os.makedirs(os.path.join(root, "notes"))  # not a session folder: ignored
        put(root, "notes", "dev.a", 9.0)
        r = subprocess.run([sys.executable, LATEST, root, out], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert speedup(out, "dev", "a") == 3.0
        assert speedup(out, "dev", "b") == 1.7
        assert speedup(out, "held", "h") == 1.1   # the first run is the held-aside result
        assert speedup(out, "dev", "h") == 2.2    # its later run counts with development
        assert speedup(out, "held", "g") == 1.3
        assert not os.path.exists(os.path.join(out, "dev", "g.json"))
        assert "with the later runs of held-aside h" in r.stdout, r.stdout
        # Bad input: a clear error, not a traceback.
        put(root, "s13", "dev.c", 1.0)
        open(os.path.join(root, "s13", "dev.c.json"), "w").write("{not json")
        r = subprocess.run([sys.executable, LATEST, root, out], capture_output=True, text=True)
        assert r.returncode == 1 and "unreadable" in r.stderr and "Traceback" not in r.stderr, r.stderr
        r = subprocess.run([sys.executable, LATEST, os.path.join(root, "missing"), out], capture_output=True, text=True)
        assert r.returncode == 2 and "not a directory" in r.stderr, r.stderr
    print("ok")


if __name__ == "__main__":
    main()
