"""Helpers for the worker tests: start `python -m kiln_worker` as a subprocess and speak the protocol."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.environ.get("KILN_CORPUS_DIR") or os.path.abspath(os.path.join(REPO, "..", "shared", "corpus"))
CANDIDATES = os.path.join(REPO, "tests", "candidates")
PYTHON = os.environ.get("KILN_PYTHON") or sys.executable


class Worker:
    def __init__(self, isolation="fork", interpret=True, extra_env=None):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(REPO, "worker") + os.pathsep + env.get("PYTHONPATH", "")
        env.update(extra_env or {})
        cmd = [PYTHON, "-m", "kiln_worker", "--isolation", isolation]
        if interpret:
            cmd.append("--interpret")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, start_new_session=True)
        self._buf = b""
        self._n = 0

    def send(self, req: dict):
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()

    def recv(self, timeout=120.0) -> dict:
        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("no response from the worker")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError("worker closed stdout; stderr:\n" + self.stderr_tail())
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, req: dict, timeout=120.0) -> dict:
        self._n += 1
        req = dict(req)
        req.setdefault("id", str(self._n))
        self.send(req)
        resp = self.recv(timeout)
        assert resp.get("id") == req["id"], (resp, req["id"])
        return resp

    def stderr_tail(self):
        try:
            os.set_blocking(self.proc.stderr.fileno(), False)
            return (self.proc.stderr.read() or b"").decode(errors="replace")[-3000:]
        except Exception:
            return ""

    def close(self):
        try:
            if self.proc.poll() is None:
                self.send({"id": "bye", "op": "shutdown"})
                self.proc.wait(timeout=10)
        except Exception:
            pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()


def header(path):
    """`# key: value` lines at the top of a candidate file."""
    h = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            body = line[1:].strip()
            if ":" in body:
                k, v = body.split(":", 1)
                k = k.strip()
                if k in h:
                    h[k] += " " + v.strip()
                else:
                    h[k] = v.strip()
    return h


def task_spec(ref: str) -> dict:
    if ref.startswith("corpus:"):
        path = os.path.join(CORPUS, ref[len("corpus:"):])
        if "/tritonbench/G/" in path or ref.startswith("corpus:tritonbench/G"):
            return {"format": "tritonbench_g", "name": os.path.basename(path), "path": path}
        if ref.startswith("corpus:tritonbench/T"):
            return {"format": "tritonbench_t", "name": os.path.basename(path), "path": path}
        return {"format": "kernelbench", "name": os.path.basename(path), "path": path}
    if ref.startswith("kiln:"):
        d = os.path.join(REPO, ref[len("kiln:"):])
        name = os.path.basename(d)
        return {"format": "kiln", "name": name, "path": os.path.join(d, f"{name}.py"),
                "bench_path": os.path.join(d, "bench.py"), "entry": name}
    return {"format": "kernelbench", "name": ref, "path": os.path.join(CANDIDATES, "tasks", f"{ref}.py")}


def eval_request(cand_path, mode=None, trials=3, seed=1234):
    """The worker request for a committed candidate; the mode is `mode`, else its `# mode:` header (a
    timing hack needs `time`), else `check`."""
    h = header(cand_path)
    mode = mode or h.get("mode", "check")
    spec = task_spec(h["task"])
    src_ref = h.get("candidate")
    if src_ref == "self":
        candidate = None
    elif src_ref and src_ref.startswith("corpus:"):
        with open(os.path.join(CORPUS, src_ref[len("corpus:"):])) as f:
            candidate = {"source": f.read(), "name": os.path.basename(src_ref)}
    else:
        with open(cand_path) as f:
            candidate = {"source": f.read(), "name": os.path.basename(cand_path)}
    return {"op": "eval", "task": spec, "candidate": candidate, "mode": mode, "policy": h.get("policy", "strict"),
            "seed": seed, "trials": trials, "limits": {"timeout_s": float(h.get("timeout_s", 20))}}


def codes(resp):
    return [r["code"] for r in resp.get("reasons", [])]
