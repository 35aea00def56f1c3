"""Starting and stopping a real `kiln serve` on loopback for the tests in this folder, and their checks:
check(cond, what) prints each outcome and collects the failures; result() is the test's exit code."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def result():
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


def skip_without_worker():
    py = os.environ.get("KILN_PYTHON", "python3")
    if subprocess.run([py, "-c", "import torch, triton"], capture_output=True).returncode != 0:
        print("SKIP: no torch/triton for the worker ($KILN_PYTHON)")
        sys.exit(77)


class Server:
    def __init__(self, kiln, *args, db=None, workdir=None):
        self.dir = workdir or tempfile.mkdtemp(prefix="kiln_serve_test_")
        self.db = db or os.path.join(self.dir, "kiln.db")
        self.port_file = os.path.join(self.dir, "port")
        if os.path.exists(self.port_file):
            os.remove(self.port_file)
        self.log = open(os.path.join(self.dir, "server.log"), "ab")
        cmd = [kiln, "serve", "--port", "0", "--port-file", self.port_file, "--db", self.db, "--interpret"]
        cmd += list(args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, cwd=ROOT)
        deadline = time.time() + 240
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kiln serve exited {self.proc.returncode}:\n{self.read_log()}")
            if os.path.exists(self.port_file) and open(self.port_file).read().strip():
                break
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError("kiln serve did not start in 240 s:\n" + self.read_log())
        self.port = int(open(self.port_file).read())
        self.url = f"http://127.0.0.1:{self.port}"

    def read_log(self):
        self.log.flush()
        return open(os.path.join(self.dir, "server.log"), errors="replace").read()[-4000:]

    def children(self):
        out = []
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == self.proc.pid:
                out.append(int(p))
        return out

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def call(url, method="GET", path="/", body=None, headers=None, raw=None, timeout=300):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    req = urllib.request.Request(url + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, text, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers or {})


def jcall(*a, **k):
    status, text, headers = call(*a, **k)
    try:
        return status, json.loads(text), headers
    except ValueError:
        return status, text, headers


def source(rel):
    with open(os.path.join(ROOT, "tests", "candidates", rel), encoding="utf-8") as f:
        return f.read()


def fenced(code, lang="python"):
    return f"Here is my kernel.\n```{lang}\n{code}```\nIt launches one program per block.\n"
