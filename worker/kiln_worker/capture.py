"""File-descriptor level capture of stdout/stderr, so nothing a candidate (or a C extension) prints can reach
the protocol stream. The protocol itself writes to a private duplicate of the original fd 1."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile


CHILD_FILE = [None]


@contextlib.contextmanager
def capture_fds():
    """Redirects fds 1 and 2 into a temp file for the duration; yields an object whose .text() reads it.
    In a fork child the file is the one the zygote made (CHILD_FILE), so a crash still leaves its output."""
    f = CHILD_FILE[0] if CHILD_FILE[0] is not None else tempfile.TemporaryFile(mode="w+b")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    saved = os.dup(1), os.dup(2)
    os.dup2(f.fileno(), 1)
    os.dup2(f.fileno(), 2)
    cap = _Captured(f)
    try:
        yield cap
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        cap.freeze()


class _Captured:
    def __init__(self, f):
        self._f = f
        self._text = None

    def text(self):
        if self._text is not None:
            return self._text
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        self._f.seek(0)
        return self._f.read().decode("utf-8", "replace")

    def freeze(self):
        try:
            self._text = self.text()
            self._f.close()
        except Exception:
            self._text = self._text or ""


def tail(text: str, n: int = 2000) -> str:
    return text[-n:] if text else ""


def looks_like_protocol(text: str) -> bool:
    """A captured line that imitates a worker response (a JSON object with id/ok/verdict)."""
    for line in text.splitlines():
        s = line.strip()
        if not (s.startswith("{") and s.endswith("}")):
            continue
        try:
            obj = json.loads(s)
        except Exception:
            continue
        if isinstance(obj, dict) and ("verdict" in obj or ("id" in obj and "ok" in obj)):
            return True
    return False
