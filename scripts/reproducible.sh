#!/usr/bin/env bash
# Checks that the release binary is reproducible: two clean builds of the working tree's tracked
# files, from two source directories of different names and lengths, each with a target
# directory of its own, both by scripts/release-build.sh (the release workflow's build), must
# give the same sha256.
#
#   scripts/reproducible.sh [--keep DIR] [--work DIR]
#
# --work DIR holds the two copies and their builds (default: a new directory under TMPDIR,
# removed at the end). --keep DIR copies the first build's binary to DIR/shipmoor (the image can
# take it with build-image.sh --binary). Both builds share CARGO_HOME (the registry's sources)
# and SOURCE_DATE_EPOCH (the last commit's time). Each build is a full release build: on two
# cores, tens of minutes; run it with `nice`.
#
# Exit 0 when the digests match; 1 when they differ, after printing each ELF section's sha256 in
# both binaries and the first differing strings, to show what differs.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
die() {
  echo "reproducible.sh: $*" >&2
  exit 2
}
say() { echo "reproducible.sh: $*" >&2; }

keep=""
work=""
while [ $# -gt 0 ]; do
  case $1 in
    --keep) [ $# -ge 2 ] || die "--keep needs a directory (e.g. --keep target/repro)"; keep=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || die "--work needs a directory (e.g. --work /var/tmp/repro)"; work=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see scripts/reproducible.sh --help)" ;;
  esac
done
for tool in git sha256sum readelf objcopy strings; do
  command -v "$tool" >/dev/null 2>&1 || die "missing: $tool (binutils, coreutils, git)"
done

if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-repro.XXXXXX")
  trap 'rm -rf "$work"' EXIT
else
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}

# Two copies of the tracked files (with the working tree's changes), at paths that differ in
# name and length.
# Both copies are made before either build starts, so that an edit to the working tree during the
# first build cannot reach the second.
sources=("$work/a/claim-check" "$work/bb/another/checkout")
for src in "${sources[@]}"; do
  rm -rf "$src"
  mkdir -p "$src"
  git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src" 2>/dev/null ||
    git ls-files -z | xargs -0 cp --parents -t "$src"
  git -C "$src" init -q
done
diff -r "${sources[0]}" "${sources[1]}" >/dev/null || die "the two copies of the sources differ"
bins=()
for src in "${sources[@]}"; do
  say "clean build in $src"
  started=$(date +%s)
  bin=$(bash "$src/scripts/release-build.sh" --locked --target-dir "$src/target/static")
  say "built in $(($(date +%s) - started)) s: $bin"
  bins+=("$bin")
done

sum_a=$(sha256sum "${bins[0]}" | cut -d' ' -f1)
sum_b=$(sha256sum "${bins[1]}" | cut -d' ' -f1)
echo "build 1: $sum_a $(stat -c %s "${bins[0]}") bytes"
echo "build 2: $sum_b $(stat -c %s "${bins[1]}") bytes"
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  install -m 0755 "${bins[0]}" "$keep/shipmoor"
fi
if [ "$sum_a" = "$sum_b" ]; then
  echo "reproducible: the two builds are identical"
  exit 0
fi

echo "NOT reproducible: the two builds differ"
sections() {
  readelf -S -W "$1" | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) .*/\1/p' | grep -v '^NULL$' || true
}
for s in $(sections "${bins[0]}"); do
  h=()
  for b in "${bins[@]}"; do
    h+=("$(objcopy -O binary --only-section="$s" "$b" /dev/stdout 2>/dev/null | sha256sum | cut -c1-16)")
  done
  [ "${h[0]}" = "${h[1]}" ] && mark=same || mark=DIFFERS
  printf '%-28s %s %s %s\n' "$s" "${h[0]}" "${h[1]}" "$mark"
done
echo "first strings only one build holds:"
diff <(strings -n 8 "${bins[0]}" | sort -u) <(strings -n 8 "${bins[1]}" | sort -u) | head -n 20 || true
exit 1
