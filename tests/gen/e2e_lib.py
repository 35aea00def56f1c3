"""What the end-to-end tests in tests/gen share (generate_test.py, optimize_llm_test.py,
optimize_llm_tuned_test.py): the skip check, the failure list, the scripted stand-in server
(standin_server.py), the golden texts (golden_e2e/; KILN_UPDATE_GOLDEN=1 rewrites them) and the end of a
run (the work folder removed when every check passed, kept and named otherwise; the exit code).

    def run(kiln, work):
        ...lib.check(cond, what)...

    if __name__ == "__main__":
        sys.exit(lib.main("kiln_my_test_", run))   # usage: my_test.py KILN
"""
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = os.environ.get("KILN_PYTHON", "python3")  # the worker's Python (torch + triton)
SKIP = 77  # CTest's SKIP_RETURN_CODE in tests/gen/CMakeLists.txt
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def worker_missing():
    """True (after saying so) when the worker's Python cannot import torch and triton: the test skips."""
    try:
        if subprocess.run([PYTHON, "-c", "import torch, triton"], capture_output=True).returncode == 0:
            return False
    except OSError:  # no such Python
        pass
    print("SKIP: no torch/triton for the worker ($KILN_PYTHON)")
    return True


@contextlib.contextmanager
def work_dir(prefix):
    """A fresh temporary folder; removed afterwards when every check passed, else kept and named."""
    work = tempfile.mkdtemp(prefix=prefix)
    passed = False
    try:
        yield work
        passed = not failures
    finally:
        if passed:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


def result():
    """The exit code of the test after its checks, with a last line saying how it went."""
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


def main(prefix, run):
    """Runs `run(kiln, work)` (kiln: sys.argv[1]; work: a fresh folder named prefix...) unless the worker's
    Python lacks torch/triton; returns the exit code: 0 passed, 1 failed, SKIP."""
    kiln = os.path.abspath(sys.argv[1])
    if worker_missing():
        return SKIP
    with work_dir(prefix) as work:
        run(kiln, work)
    return result()


class Standin:
    """The stand-in OpenAI-compatible server (standin_server.py) on loopback, answering `steps` in order;
    it logs every request to requests.jsonl in <workdir>/<name>."""

    def __init__(self, workdir, steps, name, port=None, cert=None):
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.log = os.path.join(self.dir, "requests.jsonl")
        script = os.path.join(self.dir, "script.json")
        with open(script, "w") as f:
            json.dump({"steps": steps, "idle_exit_s": 60, "max_lifetime_s": 300}, f)
        port_file = os.path.join(self.dir, "port")
        cmd = [sys.executable, os.path.join(HERE, "standin_server.py"), script, port_file, self.log]
        self.proc = subprocess.Popen(cmd + [str(port or 0)] + ([cert] if cert else []))
        for _ in range(600):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        self.port = int(open(port_file).read())
        self.url = f"{'https' if cert else 'http'}://127.0.0.1:{self.port}/v1"

    def requests(self):
        if not os.path.exists(self.log):
            return []
        return [json.loads(l) for l in open(self.log)]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def ans(name):
    """A stand-in step answering with the file tests/gen/answers/<name>."""
    return {"file": os.path.join(HERE, "answers", name)}


def golden(name, text):
    """Checks `text` against tests/gen/golden_e2e/<name>.txt (KILN_UPDATE_GOLDEN=1 rewrites it)."""
    path = os.path.join(HERE, "golden_e2e", name + ".txt")
    if os.environ.get("KILN_UPDATE_GOLDEN"):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")
    want = open(path).read() if os.path.exists(path) else None
    check(want == text + "\n", f"feedback for {name} differs from {path}:\n{text}")
