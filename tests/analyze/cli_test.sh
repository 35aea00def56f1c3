#!/usr/bin/env bash
# CLI tests for `kiln analyze` on the real binary: error messages (exact), exit codes, and that the
# other files are still analyzed when one is bad.
# Usage: cli_test.sh KILN_BINARY
set -u
kiln=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
good="$here/extra/tutorial_softmax.py"

check() {  # name, expected exit code, expected stderr file content, then the command
  local name=$1 want_rc=$2 want_err=$3
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != "$want_rc" ]; then
    echo "FAIL $name: exit code $rc, want $want_rc"; fails=$((fails + 1))
  fi
  if [ "$(cat "$tmp/err")" != "$want_err" ]; then
    echo "FAIL $name: stderr differs"; echo "--- want"; echo "$want_err"; echo "--- got"; cat "$tmp/err"
    fails=$((fails + 1))
  fi
}
contains() {  # name, file, text
  if ! grep -qF -- "$3" "$2"; then echo "FAIL $1: '$3' not in output"; fails=$((fails + 1)); fi
}

# A good file: summary on stdout, exit 0.
check good 0 "" "$kiln" analyze "$good"
contains good "$tmp/out" "kernel softmax_kernel (line 9) class softmax"
contains good "$tmp/out" "BLOCK_SIZE: computed triton.next_power_of_2(n_cols) (via BLOCK_SIZE, line 31)"

# Missing file, then a good one: error for the first, the second still analyzed, exit 1.
check missing 1 "$tmp/nope.py: error: no such file" "$kiln" analyze "$tmp/nope.py" "$good"
contains missing "$tmp/out" "kernel softmax_kernel"

# A directory.
check directory 1 "$tmp: error: is a directory (expected a Python file)" "$kiln" analyze "$tmp" "$good"
contains directory "$tmp/out" "kernel softmax_kernel"

# Unreadable file (skipped when running as root, which can read anything).
printf 'x = 1\n' >"$tmp/secret.py"
chmod 000 "$tmp/secret.py"
if ! cat "$tmp/secret.py" >/dev/null 2>&1; then
  check unreadable 1 "$tmp/secret.py: error: cannot read file: Permission denied" "$kiln" analyze "$tmp/secret.py"
fi

# Binary data.
printf '\x7fELF\x02\x01\x01\x00\x00\x00' >"$tmp/bin.py"
check binary 1 "$tmp/bin.py:1:8: error: source contains a NUL byte (not a Python source file)" "$kiln" analyze "$tmp/bin.py" "$good"
contains binary "$tmp/out" "kernel softmax_kernel"

# Not Python (a Markdown file) and a syntax error: file:line:col with the source line and a caret.
printf 'import triton\n\n@triton.jit\ndef k(x):\n    y = tl.load(x\n    return y\n' >"$tmp/syntax.py"
check syntax 1 "$tmp/syntax.py:5:16: error: syntax error: '(' was never closed
        y = tl.load(x
                   ^" "$kiln" analyze "$tmp/syntax.py" "$good"
contains syntax "$tmp/out" "kernel softmax_kernel"
printf '# Title\n\nSome *markdown* text.\n' >"$tmp/readme.md"
check markdown 1 "$tmp/readme.md:3:22: error: syntax error at the end of the line
    Some *markdown* text.
                         ^" "$kiln" analyze "$tmp/readme.md"

# Source text: a declared encoding is honoured (PEP 263), undecodable bytes are a located error, a NUL
# byte too; the JSON report of a latin-1 file is valid UTF-8.
printf '# -*- coding: latin-1 -*-\nimport triton\n\n@triton.jit\ndef k(x):\n    s = "caf\xe9"\n    return x\n\n\ndef f(x):\n    k[(1,)](x)\n' >"$tmp/latin1.py"
check latin1 0 "" "$kiln" analyze "$tmp/latin1.py"
contains latin1 "$tmp/out" "kernel k (line 5)"
check latin1-json 0 "" "$kiln" analyze --json "$tmp/latin1.py"
contains latin1-json "$tmp/out" '"name": "k"'
printf 'import triton\n# caf\xe9\n' >"$tmp/notutf8.py"
check notutf8 1 "$tmp/notutf8.py:2:6: error: cannot decode byte 0xe9 as utf-8 (the file declares no other encoding; declare it on line 1 or 2, e.g. '# -*- coding: latin-1 -*-', PEP 263)" "$kiln" analyze "$tmp/notutf8.py"
printf 'import triton\nx = 1\0\n' >"$tmp/nul.py"
check nul 1 "$tmp/nul.py:2:6: error: source contains a NUL byte (not a Python source file)" "$kiln" analyze "$tmp/nul.py"

# Deep nesting (50,000 parentheses, a 10,000-term chain): a located error, not a crash (exit 1, no signal).
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
head = "import triton\n\n@triton.jit\ndef k(x):\n    y = "
open(d + "/parens.py", "w").write(head + "(" * 50000 + "x" + ")" * 50000 + "\n")
open(d + "/chain.py", "w").write(head + " + ".join(["x"] * 10000) + "\n")
PY
for f in parens chain; do
  "$kiln" analyze "$tmp/$f.py" "$good" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" != 1 ]; then echo "FAIL deep-$f: exit code $rc, want 1"; fails=$((fails + 1)); fi
  contains "deep-$f" "$tmp/err" "$tmp/$f.py:5:"
  if [ "$f" = parens ]; then  # refused before parsing, at the 201st bracket, as CPython's tokenizer does
    contains "deep-$f" "$tmp/err" "$tmp/$f.py:5:209: error: too many nested parentheses"
  else
    contains "deep-$f" "$tmp/err" ": error: expression nested too deeply"
  fi
  contains "deep-$f" "$tmp/out" "kernel softmax_kernel"
done

# No kernels.
printf 'import torch\n\ndef f(x):\n    return x + 1\n' >"$tmp/nokernel.py"
check nokernel 1 "$tmp/nokernel.py: error: no @triton.jit function found" "$kiln" analyze "$tmp/nokernel.py" "$good"

# JSON: errors and modules side by side, exit 1; schema_version 1.
check json 1 "$tmp/nokernel.py: error: no @triton.jit function found" "$kiln" analyze --json "$tmp/nokernel.py" "$good"
contains json "$tmp/out" '"schema_version": 1'
contains json "$tmp/out" '"message": "no @triton.jit function found"'
contains json "$tmp/out" '"name": "softmax_kernel"'

# No files at all: CLI11 usage error.
"$kiln" analyze >/dev/null 2>&1
rc=$?
if [ "$rc" = 0 ]; then echo "FAIL nofiles: exit code 0"; fails=$((fails + 1)); fi

# A crash in kiln itself (test hook): the crash reporter names the signal and prints a backtrace whose
# offsets addr2line can resolve, then the process dies of the same signal (no hidden exit code).
for sig in segv abort; do
  KILN_DEBUG_CRASH=$sig "$kiln" --version >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -lt 128 ]; then echo "FAIL crash-$sig: exit code $rc, not a signal"; fails=$((fails + 1)); fi
  if ! grep -q "kiln: internal error: fatal signal" "$tmp/out" && ! grep -q "AddressSanitizer" "$tmp/out"; then
    echo "FAIL crash-$sig: no crash report"; cat "$tmp/out"; fails=$((fails + 1))
  fi
done
if grep -q "kiln: executable base" "$tmp/out" && ! grep -q "  #00 0x" "$tmp/out"; then
  echo "FAIL crash: no backtrace frames"; cat "$tmp/out"; fails=$((fails + 1))
fi

if [ "$fails" != 0 ]; then echo "$fails failure(s)"; exit 1; fi
echo "all CLI checks passed"
