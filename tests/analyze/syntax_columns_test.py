#!/usr/bin/env python3
"""`kiln analyze` points syntax errors (and TabError, IndentationError) where CPython does: for each source below, the line and column of
kiln's first error equal the lineno and offset of the SyntaxError (or TabError) that compile() raises
with the Python running this test. Also checks that each source really is rejected by CPython.
Usage: syntax_columns_test.py KILN_BINARY"""
import os
import re
import subprocess
import sys
import tempfile

KERNEL = "import triton\n\n@triton.jit\ndef k(x):\n"
SOURCES = [
    KERNEL + "    y = tl.load(x\n    return y\n",         # '(' was never closed
    "x = (1 + (2\n",                                      # the innermost open bracket
    "x = [1, 2\ny = 3\n",
    "x = )\n",                                            # unmatched ')'
    "x = (1, 2]\n",                                       # mismatched
    "if x\n    pass\n",                                   # expected ':' at the end of the line
    "x = 1 +\n",                                          # after an operator that needs more
    "x = = 2\n",
    "for i in range(3) pass\n",
    "a b\n",
    "# Title\n\nSome *markdown* text.\n",
    "class A:\n    def f(self)\n        pass\n",
    KERNEL + "    y = tl.load(x, mask=m other=0)\n",
    "def f(:\n    return 1\n",
    "if x:\n\tif y:\n        pass\n",                     # TabError
    "if x:\n        y\n\tz\n",                           # TabError on a dedent
    "x = 1\n  y = 2\n",                                  # IndentationError: unexpected indent
    "def f():\nreturn 1\n",                              # IndentationError: expected an indented block
    "class A:\n    def f(self):\n    # c\n    pass\n",
    "  x = 1\n",
]


def python_error(src):
    try:
        compile(src, "f.py", "exec")
    except SyntaxError as e:  # TabError is one
        return e.lineno, e.offset
    return None


def main():
    kiln = sys.argv[1]
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.py")
        for src in SOURCES:
            want = python_error(src)
            if want is None:
                print(f"FAIL (test data): CPython accepts {src!r}")
                fails += 1
                continue
            with open(path, "w") as f:
                f.write(src)
            r = subprocess.run([kiln, "analyze", path], capture_output=True, text=True, timeout=60)
            m = re.search(r"f\.py:(\d+):(\d+): error: ", r.stderr)
            got = (int(m.group(1)), int(m.group(2))) if m else None
            if r.returncode != 1 or got != want:
                print(f"FAIL {src!r}: kiln {got} (rc {r.returncode}), CPython {want}\n{r.stderr}")
                fails += 1
    if fails:
        print(f"{fails} failure(s)")
        return 1
    print(f"all {len(SOURCES)} syntax errors located as CPython locates them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
