"""TritonBench's legacy execution accuracy (EVAL/eval_G/1_exe_acc.py, EVAL/eval_T/1_exe_acc.py upstream):
the gold file and the candidate's file (the candidate's module, a line of 146 '#', the gold file's test part,
as upstream's 0_call_acc.py writes it) are each run as a script, and the candidate passes when its run
succeeds and its stdout equals the gold's, string for string. Only stdout counts (stderr is ignored); the
text is compared after Python's text-mode decoding (universal newlines: \\r\\n and \\r read as \\n), with no
other normalisation. Each script runs as a fresh `python FILE` would: as `__main__`, with torch's generators
at their start-of-process seed, in the sandboxed worker (the candidate under the candidate guards), after
kiln's own check of the request, the candidate's first and the gold's second (as upstream runs them)."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile

import torch

from . import guards
from . import platform as plat
from . import tasks as tasks_mod

# torch's default seed of a fresh process (c10's default_rng_seed_val): upstream runs each file in a new
# interpreter, so two runs of an unseeded test draw the same numbers.
TORCH_PROCESS_SEED = 67280421310721
STDOUT_KEEP = 2000  # characters of each stdout kept in the response


@contextlib.contextmanager
def stdout_only():
    """Redirects fd 1 (only) into a temp file for the duration; yields a list that receives the text."""
    f = tempfile.TemporaryFile(mode="w+b")
    got = []
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(f.fileno(), 1)
    try:
        yield got
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        f.seek(0)
        got.append(decode(f.read()))
        f.close()


def decode(data: bytes) -> str:
    """subprocess.run(text=True) as upstream reads stdout: UTF-8 with universal newlines."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def script_of(candidate_top: str, gold_text: str) -> str:
    """The candidate's file as upstream's call step writes it: the module, the separator, the gold's test part
    (everything after the gold file's last 146-'#' separator)."""
    test_part = gold_text.split(tasks_mod.SEP)[-1]
    return candidate_top + "\n" + tasks_mod.SEP + "\n" + test_part


def run_script(source: str, filename: str, candidate: bool, task) -> dict:
    """Runs `source` as a script; {"ran": bool, "stdout": text, "error": message or None}."""
    torch.manual_seed(TORCH_PROCESS_SEED)
    error = None
    fatal = False
    with stdout_only() as got:
        try:
            ctx = guards.candidate_running() if candidate else contextlib.nullcontext()
            with ctx, plat.cuda_shim():
                tasks_mod.load_module(source, tasks_mod.unique_name("kiln_legacy"), filename, candidate=candidate,
                                      self_names=(task.modname,),
                                      sibling_dir=os.path.dirname(os.path.abspath(task.path)), as_main=True)
        except SystemExit as e:   # sys.exit(0) / sys.exit() is a clean exit of `python FILE`
            if e.code not in (None, 0):
                error = f"SystemExit({e.code!r})"
        except Exception as e:  # noqa: BLE001 - a failing script is an outcome
            error = f"{type(e).__name__}: {e}"[:500]
            fatal = not plat.INTERPRET and plat.is_cuda_fatal(e)
    out = got[0] if got else ""
    return {"ran": error is None, "stdout": out, "error": error, "fatal": bool(error) and fatal}


def summarize(gold: dict | None, cand: dict | None, note: str | None = None) -> dict:
    """The response's `legacy_stdout`: both runs and the verdict (`passed`: the candidate ran and printed
    exactly what the gold printed). A side not run (None) fails it."""
    def side(r):
        if r is None:
            return {"ran": False, "stdout": "", "stdout_chars": 0, "error": "not run"}
        return {"ran": r["ran"], "stdout": r["stdout"][-STDOUT_KEEP:], "stdout_chars": len(r["stdout"]),
                "error": r["error"]}
    out = {"gold": side(gold), "candidate": side(cand)}
    # upstream compares the two stdouts whatever the gold's exit status
    out["equal"] = bool(cand is not None and gold is not None and cand["stdout"] == gold["stdout"])
    out["passed"] = bool(cand is not None and cand["ran"] and out["equal"])
    if note:
        out["note"] = note
    return out
