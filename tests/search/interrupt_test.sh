#!/bin/sh
# An interrupted kiln leaves nothing running: SIGTERM, SIGINT or SIGHUP to `kiln optimize`, `kiln eval`
# or `kiln profile` while its child waits kills the child's whole tree (the children lead process
# groups of their own, out of reach of a terminal's Ctrl-C) and exits 128 + signal.
# The child is a stand-in worker (--python) or ncu (--ncu) that starts a grandchild and waits.
# usage: interrupt_test.sh KILN SOURCE_DIR
set -u
kiln=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-intr-XXXXXX")
tag="700[12]\.$$"  # the stand-in's sleeps: 7001.PID (child), 7002.PID (grandchild)
cleanup() { pkill -KILL -f "$tag" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# The stand-in: a grandchild in the background and the child itself, both marked with $tag, never answering.
cat > "$tmp/standin" <<SH
#!/bin/sh
sleep 7002.$$ &
exec sleep 7001.$$
SH
chmod +x "$tmp/standin"
fail=0
alive() { pgrep -f "$tag" >/dev/null 2>&1; }
run() {  # run NAME SIGNAL ARGS...: start kiln, wait for the stand-in, signal kiln, check
  name=$1 sig=$2
  shift 2
  "$kiln" "$@" >"$tmp/out" 2>&1 &
  pid=$!
  i=0
  while ! pgrep -f "sleep 7002\.$$" >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  if ! alive; then
    echo "FAIL: $name: the stand-in never started"; cat "$tmp/out"; fail=1; kill -KILL $pid 2>/dev/null; return
  fi
  kill -"$sig" $pid
  wait $pid
  rc=$?
  sleep 0.3
  if alive; then
    echo "FAIL: $name: SIG$sig left the stand-in running:"; pgrep -af "$tag"; fail=1
    pkill -KILL -f "$tag" 2>/dev/null
  fi
  case $sig in HUP) n=1 ;; INT) n=2 ;; TERM) n=15 ;; esac
  want=$((128 + n))
  [ $rc -eq $want ] || { echo "FAIL: $name: exit $rc, want $want"; cat "$tmp/out"; fail=1; }
  [ $fail -eq 0 ] && echo "ok: $name (SIG$sig, exit $rc)"
}
export KILN_CACHE_DIR="$tmp/cache"
run optimize TERM optimize "$src/examples/softmax" --python "$tmp/standin" --no-db -q
run optimize INT optimize "$src/examples/softmax" --python "$tmp/standin" --no-db -q --dry-run
run eval HUP eval --task "$src/examples/softmax/softmax.py" --bench "$src/examples/softmax/bench.py" --entry softmax \
  --python "$tmp/standin" --no-db
run profile TERM profile --task "$src/examples/softmax/softmax.py" --bench "$src/examples/softmax/bench.py" \
  --entry softmax --ncu "$tmp/standin" --no-device
exit $fail
