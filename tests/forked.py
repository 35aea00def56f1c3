"""Runs one piece of a test in a forked child, for test scripts that import torch and triton once and then
check many modules that could crash or hang the interpreter (tests/rewrite/interp_check.py,
tests/profile/smoke_kernels.py): a fresh Python per module would import torch again each time."""
import os
import signal
import sys
import tempfile
import time
import traceback


def run_forked(fn, timeout_s=300):
    """(exit code, output) of fn() in a forked child: fn's int result (None: 0), 1 when it raises, its code
    on SystemExit, -N when killed by signal N, -1 past timeout_s (then killed). Output: what the child wrote
    to stdout and stderr (a traceback when fn raised)."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
            code = 1
            try:
                code = fn() or 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:  # noqa: BLE001 - reported through the output
                traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        deadline = time.monotonic() + timeout_s
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                code = -1
                break
            time.sleep(0.02)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return code, (text + "\ntimed out" if code == -1 else text).strip()
