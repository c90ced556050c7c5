#!/usr/bin/env bash
# Builds the release binary of Shipmoor Claim Check the one way the release workflow, the image
# (scripts/build-image.sh) and the reproducibility check (scripts/reproducible.sh) build it:
#
#   scripts/release-build.sh [--locked] [--verifier] [--target TRIPLE] [--target-dir DIR]
#
# `cargo build --release --bin shipmoor --target TRIPLE` (default: <arch>-unknown-linux-gnu) with
# `-C target-feature=+crt-static` (glibc, statically linked, no dynamic loader), and what makes
# the bytes independent of where the build ran:
# - --remap-path-prefix for the source directory (/shipmoor), CARGO_HOME (/cargo) and the target
#   directory (/target), so panic locations and file!() name no path of the build machine; the
#   same prefixes as -ffile-prefix-map in CFLAGS for the C code (tree-sitter's grammars, aws-lc);
# - SOURCE_DATE_EPOCH, the last commit's time unless set, for build scripts that stamp a date.
# The release profile (Cargo.toml) strips symbols and builds one codegen unit with fat LTO.
# --target keeps RUSTFLAGS away from build scripts and proc-macros, which must stay dynamic.
# DIR defaults to target/static (SHIPMOOR_STATIC_TARGET_DIR). Prints the binary's path last.
# --verifier builds the verifier (`--no-default-features`: replay, admit, verify-bundle, attach;
# no floor, runners, judge or agents) with the `verifier` profile, the release profile under a
# name of its own, so its binary (DIR/TRIPLE/verifier/shipmoor) never replaces the full one.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
die() {
  echo "release-build.sh: $*" >&2
  exit 2
}

locked=()
variant=(--release)
target=${SHIPMOOR_STATIC_TARGET:-$(uname -m)-unknown-linux-gnu}
target_dir=${SHIPMOOR_STATIC_TARGET_DIR:-$repo/target/static}
while [ $# -gt 0 ]; do
  case $1 in
    --locked) locked=(--locked); shift ;;
    --verifier) variant=(--profile verifier --no-default-features); shift ;;
    --target) [ $# -ge 2 ] || die "--target needs a triple (e.g. --target x86_64-unknown-linux-gnu)"; target=$2; shift 2 ;;
    --target-dir) [ $# -ge 2 ] || die "--target-dir needs a directory (e.g. --target-dir target/static)"; target_dir=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see scripts/release-build.sh --help)" ;;
  esac
done
mkdir -p "$target_dir"
target_dir=$(cd "$target_dir" && pwd)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
cargo_home=$(cd "$cargo_home" 2>/dev/null && pwd || echo "$cargo_home")
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

# rustc applies the last matching --remap-path-prefix: the target directory (often inside the
# source directory) comes after the source directory.
rustflags="-C target-feature=+crt-static"
cflags="${CFLAGS:-}"
for map in "$cargo_home=/cargo" "$repo=/shipmoor" "$target_dir=/target"; do
  rustflags+=" --remap-path-prefix=$map"
  cflags+=" -ffile-prefix-map=$map"
done

echo "release-build.sh: cargo build ${variant[*]} --target $target (CARGO_TARGET_DIR=$target_dir, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)" >&2
env -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS \
  RUSTFLAGS="$rustflags" CFLAGS="$cflags" CXXFLAGS="${CXXFLAGS:-}$cflags" \
  CARGO_TARGET_DIR="$target_dir" \
  cargo build "${variant[@]}" "${locked[@]}" --target "$target" --bin shipmoor >&2
if [ "${variant[0]}" = --release ]; then
  echo "$target_dir/$target/release/shipmoor"
else
  echo "$target_dir/$target/verifier/shipmoor"
fi
