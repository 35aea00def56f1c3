"""TritonBench's separator rule, the worker's side (one rule with src/task FindSeparator, tested there in
TaskSeparator.ExactlyOneLineOf146): the first line of exactly 146 '#' (trailing blanks allowed)."""
import glob
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "worker"))
from kiln_worker import tasks  # noqa: E402

from workerproc import CORPUS  # noqa: E402

SEP = "#" * 146


def _offset(text):
    m = tasks.find_separator(text)
    return None if m is None else m.start()


def test_separator_rule():
    assert _offset("a = 1\n" + SEP + "  \r\nb") == 6  # trailing blanks allowed
    assert _offset(SEP) == 0  # last line, no newline
    assert _offset("#" * 145 + "\n") is None
    assert _offset("#" * 147 + "\n") is None
    assert _offset("#" * 120 + "\n") is None
    assert _offset("x = '" + SEP + "'\n") is None  # not a line of its own
    assert _offset(" " + SEP + "\n") is None  # indented
    assert _offset("#" * 103 + "\n" + SEP + "\n" + SEP + "\n") == 104  # the first 146 line


def test_split_keeps_the_test_part_whole():
    top, bottom = tasks.split_tritonbench("import triton\n" + SEP + " \ndef test_x():\n    pass\n")
    assert top == "import triton\n"
    assert bottom == "\ndef test_x():\n    pass\n"
    assert tasks.split_tritonbench("a = 1\n") == ("a = 1\n", "")


@pytest.mark.skipif(not os.path.isdir(os.path.join(CORPUS, "tritonbench")), reason="corpus not present")
def test_every_corpus_file_splits():
    files = sorted(glob.glob(os.path.join(CORPUS, "tritonbench", "[GT]", "kernels", "*.py")))
    assert len(files) > 200
    for path in files:
        with open(path) as f:
            top, bottom = tasks.split_tritonbench(f.read())
        assert "def test_" in bottom and "def test_" not in top, path
