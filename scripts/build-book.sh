#!/usr/bin/env bash
# Builds the book (docs/, with mdBook, into docs/book/) and fails on any warning mdBook prints
# (a missing file, a chapter it cannot read). Installs mdBook from crates.io at the pinned
# version when `mdbook --version` does not print it. With `--site DIR`, also lays out the
# GitHub Pages site in DIR: the book under book/, docs/screenshots/ beside it as screenshots/
# (the book's pages link them as ../screenshots/, as from docs/src/), and an index.html that
# opens the book. .ci/run and .github/workflows/docs.yml both build it with this script.
set -euo pipefail
cd "$(dirname "$0")/.."
MDBOOK_VERSION=0.4.52
site=""
if [ "${1:-}" = --site ]; then
  site="${2:?--site needs a directory}"
elif [ $# -gt 0 ]; then
  echo "usage: bash scripts/build-book.sh [--site DIR]" >&2
  exit 2
fi
if [ "$(mdbook --version 2>/dev/null || true)" != "mdbook v$MDBOOK_VERSION" ]; then
  echo "build-book.sh: installing mdbook $MDBOOK_VERSION" >&2
  cargo install --locked mdbook --version "$MDBOOK_VERSION"
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! mdbook build docs >"$log" 2>&1; then
  cat "$log" >&2
  echo "build-book.sh: mdbook build docs failed" >&2
  exit 1
fi
cat "$log" >&2
if grep -Eq '\[(WARN|ERROR)\]|^(WARN|ERROR)' "$log"; then
  echo "build-book.sh: mdbook build docs warned (above); a warning fails the build" >&2
  exit 1
fi
if [ -n "$site" ]; then
  rm -rf "$site"
  mkdir -p "$site"
  cp -R docs/book "$site/book"
  cp -R docs/screenshots "$site/screenshots"
  cat >"$site/index.html" <<'HTML'
<!DOCTYPE html>
<html lang="en">
<meta charset="utf-8">
<title>Shipmoor Claim Check</title>
<meta http-equiv="refresh" content="0; url=book/">
<p><a href="book/">Shipmoor Claim Check: the book</a></p>
</html>
HTML
  echo "build-book.sh: the site is in $site" >&2
fi
