#!/usr/bin/env bash
# The generalization suite of issue 21 on one GPU, in resumable shards (one GPU command each): every
# TritonBench-G module with a perf harness, split into development and held-aside parts by
# generalization_split.py (the rule in generalization_split.md), each part in sha256 order of the name
# (a fixed order that is not alphabetical). Results and logs go where run.sh keeps them ($KILN_SUITE_DIR,
# one folder per part); modules already done are skipped.
#
#   bench/optimize_suite/generalization.sh PART FROM COUNT     PART: dev | held
#   bench/optimize_suite/generalization.sh list PART            the part's modules in run order
#   bench/optimize_suite/generalization.sh only PART NAME...    the named modules of a part
# Env: as run.sh (BUDGET, CASES, KILN_BIN, KILN_PYTHON, KILN_CORPUS, OUT).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
corpus=${KILN_CORPUS:-$root/../shared/corpus}
[ -d "$corpus/tritonbench" ] || corpus=$root/.device-carry/corpus
export KILN_CORPUS=$corpus
py=${KILN_PYTHON:-python3}

list() {  # part -> names in sha256 order
  "$py" "$here/generalization_split.py" "$corpus" | awk -v p="$1" '$2 == p {print $1}' |
    while read -r n; do printf '%s %s\n' "$(printf '%s' "$n" | sha256sum | cut -c1-16)" "$n"; done | sort | awk '{print $2}'
}

cmd=${1:?usage: generalization.sh dev|held FROM COUNT | list PART | only PART NAME...}
case "$cmd" in
  list) list "${2:?part}"; exit 0 ;;
  only) part=${2:?part}; shift 2; names=("$@") ;;
  dev|held) part=$cmd; mapfile -t all < <(list "$part"); names=("${all[@]:${2:-0}:${3:-${#all[@]}}}") ;;
  *) echo "generalization.sh: unknown command $cmd" >&2; exit 2 ;;
esac
[ "$part" = dev ] || [ "$part" = held ] || { echo "generalization.sh: part is dev or held" >&2; exit 2; }
[ ${#names[@]} -gt 0 ] || { echo "generalization.sh: no modules selected" >&2; exit 2; }
list_file=$(mktemp)
for n in "${names[@]}"; do echo "$n $part"; done > "$list_file"
export KILN_SUITE_DIR=${KILN_SUITE_DIR:-/tmp/kiln_generalization}/$part
export OUT=${OUT:-$KILN_SUITE_DIR/out}/$part
mkdir -p "$OUT"
KERNELS=$list_file "$here/run.sh" suite 0 ${#names[@]}
rc=$?
rm -f "$list_file"
exit $rc
