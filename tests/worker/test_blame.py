"""Blame (issue 15): what the task's own code raises (its harness, its reference, its import) is a task error
(`ok: false`, `error_code: task_error`, naming the task and the line), never the candidate's verdict, unless the
candidate caused it; a candidate's runtime exception is located at the candidate's own file and line."""
import os

import pytest

from workerproc import CANDIDATES

HONEST = os.path.join(CANDIDATES, "honest")
RELU_TASK = os.path.join(CANDIDATES, "tasks", "relu.py")

_MODEL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()

    def forward(self, x):
{forward}


def get_inputs():
{inputs}


def get_init_inputs():
{init}
'''


def _task(tmp_path, forward="        return torch.relu(x)", inputs="    return [torch.randn(16, 256)]",
          init="    return []", head=""):
    p = tmp_path / "broken_task.py"
    p.write_text(head + _MODEL.format(forward=forward, inputs=inputs, init=init))
    return str(p)


def _req(task_path, cand_path=os.path.join(HONEST, "relu_ok.py"), source=None, name=None):
    if source is None:
        with open(cand_path) as f:
            source = f.read()
    return {"op": "eval", "task": {"format": "kernelbench", "name": "t", "path": task_path},
            "candidate": {"source": source, "name": name or os.path.basename(cand_path)},
            "mode": "check", "trials": 2, "limits": {"timeout_s": 60}}


def _line_of(path, text):
    with open(path) as f:
        return next(i for i, l in enumerate(f, 1) if text in l)


@pytest.mark.parametrize("part,what", [
    ("inputs", "get_inputs() (case 'default') raised ValueError: no inputs today"),
    ("init", "get_init_inputs() or Model(...) (case 'default') raised ValueError: no inputs today"),
    ("forward", "the reference raised ValueError: no inputs today"),
])
def test_task_code_raising_is_a_task_error(fork_worker, tmp_path, part, what):
    bad = {part: "        raise ValueError('no inputs today')" if part == "forward"
           else "    raise ValueError('no inputs today')"}
    path = _task(tmp_path, **bad)
    r = fork_worker.request(_req(path))
    assert r["ok"] is False and r.get("error_code") == "task_error", r
    assert path in r["error"] and what in r["error"], r["error"]
    assert f"(at broken_task.py:{_line_of(path, 'no inputs today')})" in r["error"], r["error"]


def test_task_import_raising_is_a_task_error(fork_worker, tmp_path):
    path = _task(tmp_path, head="raise RuntimeError('task module is broken')\n")
    r = fork_worker.request(_req(path))
    assert r["ok"] is False and r.get("error_code") == "task_error", r
    assert "importing the task's reference raised RuntimeError: task module is broken" in r["error"], r["error"]


def test_candidate_that_breaks_the_harness_keeps_its_verdict(fork_worker):
    # the candidate replaces torch.randn (get_inputs then raises): its doing, so a verdict, not a task error
    src = ("import torch\nimport torch.nn as nn\n\n"
           "def _boom(*a, **k):\n    raise RuntimeError('sabotaged')\n\ntorch.randn = _boom\n\n"
           "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n")
    r = fork_worker.request(_req(RELU_TASK, source=src, name="sabotage.py"))
    assert r["ok"] is True and r["verdict"] == "rejected", r
    assert "patched_torch" in [x["code"] for x in r["reasons"]], r


def test_runtime_exception_points_at_the_candidates_line(fork_worker):
    cand = os.path.join(CANDIDATES, "faulty", "exception.py")
    r = fork_worker.request(_req(RELU_TASK, cand))
    assert r["verdict"] == "runtime_error", r
    line = _line_of(cand, "candidate failed on purpose")
    first = r["reasons"][0]
    assert (first["code"], first["file"], first["line"]) == ("exception", "exception.py", line), first
    assert r["message"].startswith(f"exception.py:{line}: ValueError: candidate failed on purpose"), r["message"]
    # the traceback names the candidate's file, not the worker's temporary copy of it
    assert f'File "exception.py", line {line}' in r["stderr_tail"], r["stderr_tail"]
    assert "kiln_worker_" not in r["stderr_tail"], r["stderr_tail"]
