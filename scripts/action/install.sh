#!/usr/bin/env bash
# The Action's first step: puts `shipmoor` on PATH. A pinned release binary when
# action/releases.txt lists one for this version and runner (its SHA-256 checked before it is
# used), else a build from the Action's own source with cargo.
set -euo pipefail
action_path="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}"
dest="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/shipmoor-bin"
mkdir -p "$dest"

if [ -n "${SHIPMOOR_BIN:-}" ]; then
  # A binary the workflow provides (a container job, a test of the Action).
  install -m 0755 "$SHIPMOOR_BIN" "$dest/shipmoor"
else
  version="$(printenv INPUT_VERSION || true)"
  if [ -z "$version" ]; then
    version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_path/Cargo.toml" | head -n 1)"
  fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64) target=aarch64-unknown-linux-gnu ;;
    *) target="unsupported-$(uname -s)-$(uname -m)" ;;
  esac
  line="$(grep -E "^${version//./\\.}[[:space:]]+${target}[[:space:]]" "$action_path/action/releases.txt" || true)"
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
  else
    echo "claim-check: no pinned release of shipmoor $version for $target; building it from the Action's source"
    if ! command -v cargo >/dev/null 2>&1; then
      echo "::error title=Claim Check::no release binary for $target and no cargo to build one; add a Rust toolchain step (dtolnay/rust-toolchain) before this action"
      exit 1
    fi
    target_dir="${SHIPMOOR_CARGO_TARGET_DIR:-${RUNNER_TEMP:-/tmp}/shipmoor-target}"
    profile="${SHIPMOOR_CARGO_PROFILE:-release}"
    CARGO_TARGET_DIR="$target_dir" cargo build --locked --profile "$profile" --manifest-path "$action_path/Cargo.toml" --bin shipmoor
    dir="$profile"; [ "$profile" = dev ] && dir=debug
    install -m 0755 "$target_dir/$dir/shipmoor" "$dest/shipmoor"
  fi
fi
"$dest/shipmoor" --version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dest" >> "$GITHUB_PATH"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "path=$dest/shipmoor" >> "$GITHUB_OUTPUT"
fi
