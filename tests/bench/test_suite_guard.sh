#!/usr/bin/env bash
# bench/gpu/opt2_generalization.sh refuses a suite directory inside OUT (the device tool returns only so many
# files from OUT: session 21 lost a command's logs so), before anything else, and lets one outside through
# to its next input check.
set -u
script=${1:?opt2_generalization.sh}
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
for inside in "$d/suite" "$d"; do
  err=$(OUT=$d KILN_SUITE_DIR=$inside bash "$script" "dev:0:1" 2>&1); rc=$?
  [ $rc -eq 2 ] && grep -q "is inside OUT" <<< "$err" || { echo "FAIL inside ($inside): rc $rc: $err"; exit 1; }
  [ ! -e "$d/suite" ] || { echo "FAIL: the refused suite directory was created"; exit 1; }
done
err=$(OUT=$d/out KILN_SUITE_DIR=$d/suite bash "$script" "dev:0:1" 2>&1)
grep -q "is inside OUT" <<< "$err" && { echo "FAIL outside: $err"; exit 1; }
echo "suite guard: ok"
