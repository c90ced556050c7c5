#!/usr/bin/env bash
# The Action's first step: puts `shipmoor` on PATH. A pinned release binary when
# action/releases.txt lists one for this version and runner (its SHA-256 checked before it is
# used), else the binary an earlier run of this repository built from the same source
# (SHIPMOOR_CACHE_DIR, which actions/cache restores), else a build from the Action's own source
# with cargo (then left in SHIPMOOR_CACHE_DIR for actions/cache to save).
#
# A fuse (INPUT_FUSE set: the job that decides and signs) never takes shipmoor from a cache,
# which any job of the repository, one that ran a change's code among them, can write: a pinned
# release, else a build from the Action's own source into a fresh directory.
#
#   install.sh               install (the step "Install shipmoor")
#   install.sh --cache-key   print the cache's step outputs: needed=true|false (false when a
#                            pinned release or SHIPMOOR_BIN serves), dir=, key= (the runner's
#                            OS and architecture, and a digest of the source cargo builds from)
set -euo pipefail
action_path="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}"
dest="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/shipmoor-bin"

version="$(printenv INPUT_VERSION || true)"
if [ -z "$version" ]; then
  version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_path/Cargo.toml" | head -n 1)"
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
  Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
  *) target="unsupported-$(uname -s)-$(uname -m)" ;;
esac
fresh=false
[ -n "$(printenv INPUT_FUSE || true)" ] && fresh=true
line="$(grep -E "^${version//./\\.}[[:space:]]+${target}[[:space:]]" "$action_path/action/releases.txt" 2>/dev/null || true)"

if [ "${1:-}" = "--cache-key" ]; then
  out="${GITHUB_OUTPUT:-/dev/stdout}"
  if [ -n "${SHIPMOOR_BIN:-}" ] || [ -n "$line" ] || [ "$fresh" = true ]; then
    echo "needed=false" >>"$out"
    exit 0
  fi
  # What cargo builds the binary from: its manifest, its lock file and its sources.
  source_digest="$(cd "$action_path" && find Cargo.toml Cargo.lock src crates -type f -print0 | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum | cut -c1-32)"
  {
    echo "needed=true"
    echo "dir=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/shipmoor-cache"
    echo "key=shipmoor-$version-$target-${SHIPMOOR_CARGO_PROFILE:-release}-$source_digest"
  } >>"$out"
  exit 0
fi
mkdir -p "$dest"

cache_dir="${SHIPMOOR_CACHE_DIR:-}"
[ "$fresh" = true ] && cache_dir=""
if [ -n "${SHIPMOOR_BIN:-}" ]; then
  # A binary the workflow provides (a container job, a test of the Action).
  install -m 0755 "$SHIPMOOR_BIN" "$dest/shipmoor"
else
  if [ -n "$line" ]; then
    read -r _ _ want url <<<"$line"
    # A mirror of the release assets (an air-gapped runner, a test).
    if [ -n "${SHIPMOOR_RELEASE_BASE_URL:-}" ]; then
      url="${SHIPMOOR_RELEASE_BASE_URL%/}/$(basename "$url")"
    fi
    echo "claim-check: installing shipmoor $version ($target) from $url"
    tmp="$(mktemp "$dest/.download.XXXXXX")"
    curl --fail --silent --show-error --location --retry 3 --output "$tmp" "$url"
    got="$(sha256sum "$tmp" | cut -d' ' -f1)"
    if [ "$got" != "$want" ]; then
      rm -f "$tmp"
      echo "::error title=Claim Check::the downloaded shipmoor $version has SHA-256 $got, not the pinned $want; refusing to run it"
      exit 1
    fi
    chmod 0755 "$tmp"
    mv "$tmp" "$dest/shipmoor"
  elif [ -n "$cache_dir" ] && [ -x "$cache_dir/shipmoor" ] && "$cache_dir/shipmoor" --version >/dev/null 2>&1; then
    echo "claim-check: installed shipmoor $version from cache (built by an earlier run from the same source)"
    install -m 0755 "$cache_dir/shipmoor" "$dest/shipmoor"
  else
    if [ "$fresh" = true ]; then
      echo "claim-check: no pinned release of shipmoor $version for $target; building it from the Action's own source into a fresh directory (a fuse never runs a cached binary)"
    else
      echo "claim-check: no pinned release of shipmoor $version for $target; building it from the Action's source (once: later runs install it from cache)"
    fi
    if ! command -v cargo >/dev/null 2>&1; then
      echo "::error title=Claim Check::no release binary for $target and no cargo to build one; add a Rust toolchain step (dtolnay/rust-toolchain) before this action"
      exit 1
    fi
    target_dir="${SHIPMOOR_CARGO_TARGET_DIR:-${RUNNER_TEMP:-/tmp}/shipmoor-target}"
    if [ "$fresh" = true ]; then
      target_dir="$(mktemp -d "${RUNNER_TEMP:-/tmp}/shipmoor-target.XXXXXX")"
    fi
    profile="${SHIPMOOR_CARGO_PROFILE:-release}"
    # From the Action's own directory: cargo reads `.cargo/config.toml` and rustup
    # `rust-toolchain.toml` from where it starts, and the checkout is the change's.
    (cd "$action_path" && CARGO_TARGET_DIR="$target_dir" cargo build --locked --profile "$profile" --manifest-path "$action_path/Cargo.toml" --bin shipmoor)
    dir="$profile"; [ "$profile" = dev ] && dir=debug
    install -m 0755 "$target_dir/$dir/shipmoor" "$dest/shipmoor"
    if [ -n "$cache_dir" ]; then
      mkdir -p "$cache_dir"
      install -m 0755 "$target_dir/$dir/shipmoor" "$cache_dir/shipmoor"
    fi
  fi
fi
"$dest/shipmoor" --version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dest" >> "$GITHUB_PATH"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "path=$dest/shipmoor" >> "$GITHUB_OUTPUT"
fi
