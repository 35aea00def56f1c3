#!/bin/sh
# Every option of every kiln command (as `kiln CMD --help` lists it) appears in the README.
# usage: check_readme_options.sh KILN README.md
kiln=$1 readme=$2
missing=0
cmds=$("$kiln" --help | awk '/^Subcommands:/{s=1; next} s && NF {print $1}')
[ -n "$cmds" ] || { echo "no subcommands in kiln --help"; exit 1; }
for c in $cmds; do
  # option names where the help lists them: at the start of an entry ("  -o,--out TEXT", "  --json")
  for o in $("$kiln" "$c" --help | sed -n 's/^  \(-[A-Za-z],\)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' | sort -u); do
    [ "$o" = "--help" ] && continue
    grep -q -- "\`$o\|$o[ ,|=\`]" "$readme" || { echo "README.md does not document kiln $c $o"; missing=1; }
  done
done
[ $missing -eq 0 ] && echo "every option of every command is in the README:" $cmds
exit $missing
