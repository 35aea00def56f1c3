#!/usr/bin/env bash
# Fetches the tree-sitter Python grammar (pinned) from PyPI as a source distribution and unpacks
# its C sources into third_party/tree-sitter-python/ (ignored by git; compiled into kiln).
#
# The grammar's sdist leaves out the headers its generated parser includes (tree_sitter/parser.h,
# array.h and what array.h includes). They come from the matching tree-sitter core, taken from the
# source distribution of py-tree-sitter 0.23.2 on PyPI. Language version 14 keeps the TSLanguage
# layout that Debian 12's tree-sitter 0.20.7 runtime reads.
set -euo pipefail
VERSION=0.23.6
CORE_VERSION=0.23.2
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/third_party/tree-sitter-python
if [[ -f $dest/src/parser.c && -f $dest/VERSION && $(cat "$dest/VERSION") == "$VERSION" ]]; then
  exit 0
fi
py=${KILN_BOOTSTRAP_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m pip download -q --no-binary :all: --no-deps "tree-sitter-python==$VERSION" -d "$tmp"
tar -xzf "$tmp"/tree_sitter_python-"$VERSION".tar.gz -C "$tmp"
rm -rf "$dest"
mkdir -p "$dest"
cp -r "$tmp/tree_sitter_python-$VERSION/src" "$dest/"
"$py" -m pip download -q --no-binary :all: --no-deps "tree-sitter==$CORE_VERSION" -d "$tmp"
tar -xzf "$tmp/tree-sitter-$CORE_VERSION.tar.gz" -C "$tmp"
mkdir -p "$dest/src/tree_sitter"
for h in parser.h array.h alloc.h ts_assert.h; do
  cp "$tmp/tree-sitter-$CORE_VERSION/tree_sitter/core/lib/src/$h" "$dest/src/tree_sitter/"
done
cp "$tmp/tree_sitter_python-$VERSION/LICENSE" "$dest/" 2>/dev/null || true
echo "$VERSION" > "$dest/VERSION"
echo "fetched tree-sitter-python $VERSION"
