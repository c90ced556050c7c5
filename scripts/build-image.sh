#!/usr/bin/env bash
# Builds the container images of Shipmoor Claim Check with buildah: no Docker engine, no registry.
#
#   scripts/build-image.sh [--image full|verifier|both] [--dev] [--binary PATH]
#                          [--verifier-binary PATH] [--tag TAG] [--verifier-tag TAG] [--locked]
#                          [--smoke]
#
# Two images (book: container.md):
# - the full image (TAG, default shipmoor/claim-check:<version>): the whole `shipmoor`, the Docker
#   action's entrypoint, git, busybox; what `claim-check` runs in.
# - the verifier image (--verifier-tag, default shipmoor/claim-check-verifier:<version>): the
#   verifier build (`--no-default-features`: replay, admit and its export, verify-bundle,
#   attach, keygen, evidence, explain; no floor, runners, tree-sitter, judge or MCP) and busybox,
#   no git (a replay there takes --commit); for admission and for pipelines that verify.
# --image picks one (default both).
#
# 1. The binaries. By default the release workflow's reproducible static builds:
#    scripts/release-build.sh (`cargo build --release` for <arch>-unknown-linux-gnu with
#    `-C target-feature=+crt-static`) and `release-build.sh --verifier` (the `verifier` profile),
#    in their own target dir, target/static (SHIPMOOR_STATIC_TARGET_DIR), so they never fight
#    the debug builds; then the verifier image must be at most SHIPMOOR_VERIFIER_BUDGET bytes
#    (20000000), or the script fails. --locked passes --locked to cargo (releases).
#    --dev takes the dev profile's builds instead, for smoke tests (CI and the container tests):
#    the tests' own target/debug/shipmoor (`cargo build`) and the verifier as `cargo build
#    --no-default-features --features verifier-bin --bin shipmoor-verifier` (the same binary
#    under a name of its own: it shares the tests' dependencies and never replaces their
#    binary); both are stripped, may link dynamically (their libraries are copied as busybox's
#    are), and their sizes are not the release's (no budget). --binary / --verifier-binary take a binary built
#    elsewhere.
# 2. Each root filesystem, staged in target/image/rootfs/ (full) and target/image/rootfs-verifier/:
#    the binary at /usr/local/bin/shipmoor, Debian's dynamic busybox (/bin/sh and its applets)
#    with the shared libraries `ldd` lists, CA certificates, passwd/group/nsswitch.conf/hosts,
#    /root and /tmp (1777), and the Debian copyright files of every package something was taken
#    from; the full image also holds Debian's git (with its libraries: busybox shares git's libc,
#    1.1 MB less than busybox-static), /etc/gitconfig with safe.directory = *, and the Docker
#    action's entrypoint (container/entrypoint.sh) at /usr/local/bin/shipmoor-action.
# 3. `buildah --storage-driver vfs bud` of the Dockerfile from the repository's root
#    (.dockerignore sends only the two staged root filesystems; the build argument ROOTFS picks
#    one), with the last commit's time as the image's timestamp; skipped when an image with this
#    tag already holds exactly this content.
# 4. Prints each image's size; --smoke then runs, inside each (`buildah run --isolation chroot`),
#    `shipmoor --version`, a replay of tests/fixtures/replay/format-1 and an admission of
#    tests/fixtures/admit, in the full image `git --version`, and in the verifier image `shipmoor
#    claim-check`, which must exit 2 with its one line.
#
# Needs root on a fresh machine to install what is missing with apt-get: buildah, git,
# ca-certificates. The busybox is /bin/busybox when that is Debian's dynamic one, else the
# `busybox` package fetched with `apt-get download` (no install: it would conflict with
# busybox-static) and unpacked into target/image/busybox-deb. SHIPMOOR_STORAGE_DRIVER overrides
# the storage driver (vfs), SHIPMOOR_STATIC_TARGET the Rust target, SHIPMOOR_IMAGE_GIT the git
# binary (/usr/bin/git), SHIPMOOR_IMAGE_BUSYBOX the busybox binary.
# Concurrent runs take turns (flock on target/image.lock).
set -euo pipefail
caller=$(pwd)
cd "$(dirname "$0")/.."
repo=$(pwd)

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() {
  echo "build-image.sh: $*" >&2
  exit 1
}
say() { echo "build-image.sh: $*" >&2; }

binary=""
verifier_binary=""
tag=""
verifier_tag=""
which=both
dev=no
smoke=no
locked=()
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --verifier-binary) [ $# -ge 2 ] || die "--verifier-binary needs a path"; verifier_binary=$2; shift 2 ;;
    --verifier-binary=*) verifier_binary=${1#*=}; shift ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; tag=$2; shift 2 ;;
    --tag=*) tag=${1#*=}; shift ;;
    --verifier-tag) [ $# -ge 2 ] || die "--verifier-tag needs a name"; verifier_tag=$2; shift 2 ;;
    --verifier-tag=*) verifier_tag=${1#*=}; shift ;;
    --image) [ $# -ge 2 ] || die "--image needs full, verifier or both"; which=$2; shift 2 ;;
    --image=*) which=${1#*=}; shift ;;
    --dev) dev=yes; shift ;;
    --smoke) smoke=yes; shift ;;
    --locked) locked=(--locked); shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | sed -n 1p)
[ -n "$version" ] || die "no version in Cargo.toml"
case $which in full | verifier | both) ;; *) die "--image takes full, verifier or both, not '$which'" ;; esac
tag=${tag:-shipmoor/claim-check:$version}
verifier_tag=${verifier_tag:-shipmoor/claim-check-verifier:$version}
budget=${SHIPMOOR_VERIFIER_BUDGET:-20000000}
storage=(--storage-driver "${SHIPMOOR_STORAGE_DRIVER:-vfs}")
image_dir=$repo/target/image
mkdir -p "$image_dir"

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
# A serialised section from here on: concurrent runs (parallel test processes) would race
# apt-get for dpkg's lock, and the staging directory and the tag are shared.
command -v flock >/dev/null 2>&1 || die "missing: flock (util-linux)"
mkdir -p "$repo/target"
exec 9>"$repo/target/image.lock"
flock 9

apt_updated=no
apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    die "missing: $* (install the Debian packages $*; this script installs them itself only as root with apt-get)"
  fi
  say "installing $* with apt-get"
  if [ "$apt_updated" = no ]; then
    apt-get update -qq >&2 || die "apt-get update failed"
    apt_updated=yes
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 || die "apt-get install $* failed"
}

command -v buildah >/dev/null 2>&1 || apt_install buildah
command -v buildah >/dev/null 2>&1 || die "buildah is still missing after installing it"
git_bin=${SHIPMOOR_IMAGE_GIT:-/usr/bin/git}
[ -x "$git_bin" ] || apt_install git
cacerts=/etc/ssl/certs/ca-certificates.crt
[ -s "$cacerts" ] || apt_install ca-certificates
for tool in ldd flock tar gzip dpkg-deb; do
  command -v "$tool" >/dev/null 2>&1 || die "missing: $tool"
done

# ldd says "not a dynamic executable" (static) or "statically linked" (static-pie).
is_static() {
  local said
  said=$(LC_ALL=C ldd "$1" 2>&1) || true
  grep -qE 'not a dynamic executable|statically linked' <<<"$said"
}

# The busybox: a dynamic one links only libc (and libresolv), which git brings already.
busybox_copyright=""
if [ -n "${SHIPMOOR_IMAGE_BUSYBOX:-}" ]; then
  busybox_bin=$SHIPMOOR_IMAGE_BUSYBOX
elif [ -x /bin/busybox ] && ! is_static /bin/busybox; then
  busybox_bin=/bin/busybox
else
  deb_dir=$image_dir/busybox-deb
  if [ ! -x "$deb_dir/bin/busybox" ]; then
    command -v apt-get >/dev/null 2>&1 ||
      die "missing: a dynamic busybox (set SHIPMOOR_IMAGE_BUSYBOX to one, or run where apt-get can download Debian's busybox package)"
    say "downloading Debian's busybox package (apt-get download busybox)"
    rm -rf "$deb_dir" && mkdir -p "$deb_dir/deb"
    # A fresh machine's package lists may be empty: update them once (as root) and try again.
    if ! (cd "$deb_dir/deb" && apt-get download busybox >&2); then
      if [ "$(id -u)" = 0 ] && [ "$apt_updated" = no ]; then
        apt-get update -qq >&2 || die "apt-get update failed"
        apt_updated=yes
      fi
      (cd "$deb_dir/deb" && apt-get download busybox >&2) ||
        die "apt-get download busybox failed (run apt-get update, or set SHIPMOOR_IMAGE_BUSYBOX)"
    fi
    dpkg-deb -x "$deb_dir"/deb/busybox_*.deb "$deb_dir"
  fi
  busybox_bin=$deb_dir/bin/busybox
  busybox_copyright=$deb_dir/usr/share/doc/busybox/copyright
fi
[ -x "$busybox_bin" ] || die "no busybox at $busybox_bin"
"$busybox_bin" sh -c true || die "$busybox_bin does not run"

# ---------------------------------------------------------------------------------------------
# 1. The binaries
# ---------------------------------------------------------------------------------------------
target=${SHIPMOOR_STATIC_TARGET:-$(uname -m)-unknown-linux-gnu}
absolute() { case $1 in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }
[ -z "$binary" ] || binary=$(absolute "$binary")
[ -z "$verifier_binary" ] || verifier_binary=$(absolute "$verifier_binary")
wants() { [ "$which" = both ] || [ "$which" = "$1" ]; }
# cargo's target directory, where the dev builds land (CARGO_TARGET_DIR or the workspace's).
dev_target_dir() {
  cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p'
}
static_target_dir=${SHIPMOOR_STATIC_TARGET_DIR:-$repo/target/static}
if wants full && [ -z "$binary" ]; then
  if [ "$dev" = yes ]; then
    say "building the full binary (cargo build --bin shipmoor, the dev profile)"
    cargo build --quiet "${locked[@]}" --bin shipmoor >&2 || die "cargo build failed"
    binary=$(dev_target_dir)/debug/shipmoor
  else
    say "building the static binary (scripts/release-build.sh --target $target, CARGO_TARGET_DIR=$static_target_dir)"
    # The release workflow's build, path maps included: the image holds the release's bytes.
    binary=$(bash scripts/release-build.sh "${locked[@]}" --target "$target" --target-dir "$static_target_dir")
  fi
fi
if wants verifier && [ -z "$verifier_binary" ]; then
  if [ "$dev" = yes ]; then
    say "building the verifier binary (cargo build --no-default-features --features verifier-bin, the dev profile)"
    cargo build --quiet "${locked[@]}" --no-default-features --features verifier-bin --bin shipmoor-verifier >&2 ||
      die "cargo build --no-default-features failed"
    verifier_binary=$(dev_target_dir)/debug/shipmoor-verifier
  else
    say "building the static verifier binary (scripts/release-build.sh --verifier --target $target, CARGO_TARGET_DIR=$static_target_dir)"
    verifier_binary=$(bash scripts/release-build.sh "${locked[@]}" --verifier --target "$target" --target-dir "$static_target_dir")
  fi
fi
# check_binary PATH NAME: runs, and is static unless --dev.
check_binary() {
  [ -x "$1" ] || die "no $2 binary at $1"
  if [ "$dev" = no ] && ! is_static "$1"; then
    die "$1 is not statically linked (ldd: $(ldd "$1" 2>&1 | sed -n 1,3p | tr '\n' ' '); --dev takes a dynamic one)"
  fi
  local said
  said=$("$1" --version) || die "$1 --version failed"
  say "$2 binary: $1 ($said, $(du -h "$1" | cut -f1))"
}
wants full && check_binary "$binary" full
wants verifier && check_binary "$verifier_binary" verifier

# ---------------------------------------------------------------------------------------------
# 2. The root filesystems
# ---------------------------------------------------------------------------------------------
# note_package PATH: the Debian package PATH came from (dpkg knows /lib and /bin paths, and not
# always their /usr twins: ask for the path as given, then as resolved).
note_package() {
  local pkg="" p
  command -v dpkg >/dev/null 2>&1 || return 0
  for p in "$1" "$(readlink -f "$1")"; do
    pkg=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1) || true
    [ -z "$pkg" ] || break
  done
  [ -z "$pkg" ] || packages+=("$pkg")
}

# copy_with_libs SRC DEST: SRC at DEST in the image, and each shared library ldd lists at the
# path the loader found it (the image has no ld.so.cache: those are the default directories).
copy_with_libs() {
  local src=$1 dest=$2 lib
  install -D -m 0755 "$src" "$rootfs$dest"
  note_package "$src"
  is_static "$src" && return 0
  copy_libs_of "$src"
}
copy_libs_of() {
  local lib
  while read -r lib; do
    [ -n "$lib" ] || continue
    [ -e "$rootfs$lib" ] && continue
    install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
    note_package "$lib"
  done < <(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
}

# stage ROOTFS BINARY VARIANT: the root filesystem of one image.
stage() {
  rootfs=$1
  local bin=$2 variant=$3 applet pkg pkg_base
  packages=()
  rm -rf "$rootfs"
  mkdir -p "$rootfs"/{bin,etc/ssl/certs,usr/bin,usr/local/bin,usr/share/doc,root,tmp}
  chmod 0700 "$rootfs/root"
  chmod 1777 "$rootfs/tmp"
  install -m 0755 "$bin" "$rootfs/usr/local/bin/shipmoor"
  if [ "$dev" = yes ]; then
    # A dev build carries its debug sections: not needed to run it, and tens of megabytes.
    strip --strip-all "$rootfs/usr/local/bin/shipmoor" 2>/dev/null ||
      say "strip is missing (binutils): the dev binary goes in unstripped"
    is_static "$bin" || copy_libs_of "$bin"
  fi
  if [ "$variant" = full ]; then
    install -m 0755 container/entrypoint.sh "$rootfs/usr/local/bin/shipmoor-action"
  fi
  if [ "$variant" = full ]; then
    copy_with_libs "$git_bin" /usr/bin/git
  fi
  copy_with_libs "$busybox_bin" /bin/busybox
  if [ -n "$busybox_copyright" ]; then
    install -D -m 0644 "$busybox_copyright" "$rootfs/usr/share/doc/busybox/copyright"
  fi
  while read -r applet; do
    case $applet in "" | busybox) continue ;; esac
    [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"
  done < <("$busybox_bin" --list)
  install -m 0644 "$cacerts" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  packages+=(ca-certificates) # the bundle is generated by update-ca-certificates: no package owns it

  cat >"$rootfs/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
  cat >"$rootfs/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
  cat >"$rootfs/etc/nsswitch.conf" <<'NSS'
passwd: files
group: files
hosts: files dns
NSS
  cat >"$rootfs/etc/hosts" <<'HOSTS'
127.0.0.1 localhost
::1 localhost
HOSTS
  if [ "$variant" = full ]; then
    # The workspace of a container job or Docker action is mounted from the runner's user:
    # trust it.
    cat >"$rootfs/etc/gitconfig" <<'GITCONFIG'
[safe]
	directory = *
GITCONFIG
  fi

  # Licences of what was copied from Debian (git and busybox are GPL-2.0: the copyright files
  # say where their sources are).
  for pkg in $(printf '%s\n' "${packages[@]}" | sort -u); do
    pkg_base=${pkg%%:*}
    if [ -f "/usr/share/doc/$pkg_base/copyright" ]; then
      install -D -m 0644 "/usr/share/doc/$pkg_base/copyright" "$rootfs/usr/share/doc/$pkg_base/copyright"
    fi
  done
}

# ---------------------------------------------------------------------------------------------
# 3. The images
# ---------------------------------------------------------------------------------------------
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
timestamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)

# build_image ROOTFS TAG TITLE DESCRIPTION
build_image() {
  local root=$1 name=$2 title=$3 description=$4 content existing previous
  content=$(
    {
      cat Dockerfile .dockerignore
      echo "$version $revision $timestamp $title $description"
      (cd "$root" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort)
      (cd "$root" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    } | sha256sum | cut -d' ' -f1
  )
  existing=$(buildah "${storage[@]}" inspect --type image \
    --format '{{index .OCIv1.Config.Labels "dev.shipmoor.content"}}' "$name" 2>/dev/null || true)
  if [ "$existing" = "$content" ]; then
    say "image $name already holds this content ($content): not rebuilt"
    return 0
  fi
  say "building image $name"
  previous=$(buildah "${storage[@]}" inspect --type image --format '{{.FromImageID}}' "$name" 2>/dev/null || true)
  buildah "${storage[@]}" bud --quiet \
    --file Dockerfile \
    --tag "$name" \
    --timestamp "$timestamp" \
    --build-arg "ROOTFS=${root#"$repo"/}" \
    --build-arg "VERSION=$version" \
    --build-arg "REVISION=$revision" \
    --build-arg "TITLE=$title" \
    --build-arg "DESCRIPTION=$description" \
    --label "dev.shipmoor.content=$content" \
    "$repo" >/dev/null
  # The image this tag named before, if no name is left on it, is removed (unless in use).
  if [ -n "$previous" ] &&
    buildah "${storage[@]}" images --filter dangling=true --noheading --no-trunc --format '{{.ID}}' 2>/dev/null |
    grep -q "$previous"; then
    buildah "${storage[@]}" rmi "$previous" >/dev/null 2>&1 || true
  fi
}

# ---------------------------------------------------------------------------------------------
# 4. Sizes and smoke checks
# ---------------------------------------------------------------------------------------------
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
# report ROOTFS TAG: one line of sizes; sets image_bytes.
report() {
  local root=$1 name=$2 image_size rootfs_bytes gzip_bytes built
  image_size=$(buildah "${storage[@]}" images --format '{{.Size}}' "$name" | sed -n 1p)
  # buildah's own figure ("19.8 MB": decimal units), in bytes, for the budget.
  image_bytes=$(awk '{ u = $2; m = (u == "kB" ? 1e3 : u == "MB" ? 1e6 : u == "GB" ? 1e9 : 1); printf "%d", $1 * m }' <<<"$image_size")
  rootfs_bytes=$(du -sb "$root" | cut -f1)
  gzip_bytes=$(tar -C "$root" -cf - . | gzip -6 | wc -c)
  built=release
  [ "$dev" = no ] || built="dev build, not the release's size"
  local git_part="the libraries"
  [ ! -e "$root/usr/bin/git" ] || git_part="git and the libraries"
  echo "image $name: $image_size ($(mib "$rootfs_bytes") uncompressed, $(mib "$gzip_bytes") as a gzip layer; $built): shipmoor $(mib "$(stat -c %s "$root/usr/local/bin/shipmoor")"), $git_part $(mib "$(cat "$root/usr/bin/git" "$root"/lib*/*/* "$root"/lib64/* 2>/dev/null | wc -c)"), busybox $(mib "$(stat -c %s "$root/bin/busybox")")"
}

# smoke TAG VARIANT
smoke() {
  local name=$1 variant=$2 ctr out code
  ctr=$(buildah "${storage[@]}" from --quiet "$name")
  containers+=("$ctr")
  run() { buildah "${storage[@]}" run --isolation chroot "$@"; }
  say "smoke ($variant): shipmoor --version"
  run "$ctr" -- shipmoor --version
  if [ "$variant" = full ]; then
    say "smoke (full): git --version"
    run "$ctr" -- git --version
  fi
  say "smoke ($variant): shipmoor replay of tests/fixtures/replay/format-1"
  run -v "$repo/tests/fixtures/replay/format-1:/fixture:ro" --workingdir /fixture "$ctr" -- \
    shipmoor replay claim-check.vsa.json --allow-unsigned \
    --commit fbac99915b71a5f8645bf21e20c54f0cfb18a1cb --evidence evidence
  say "smoke ($variant): shipmoor admit of tests/fixtures/admit"
  run -v "$repo/tests/fixtures/admit:/fixture:ro" --workingdir /fixture "$ctr" -- \
    shipmoor admit --policy policy.yaml --attestation vsa.sigstore.json \
    --subject "$(cat "$repo/tests/fixtures/admit/subject.txt")"
  if [ "$variant" = verifier ]; then
    say "smoke (verifier): shipmoor claim-check says where the full build is"
    code=0
    out=$(run "$ctr" -- shipmoor claim-check 2>&1) || code=$?
    [ "$code" = 2 ] || die "claim-check in the verifier image exited $code, not 2: $out"
    grep -q "verifies only" <<<"$out" || die "claim-check in the verifier image did not say it verifies only: $out"
    echo "$out"
  fi
}

containers=()
trap 'for c in "${containers[@]}"; do buildah "${storage[@]}" rm "$c" >/dev/null 2>&1 || true; done' EXIT
if wants full; then
  stage "$image_dir/rootfs" "$binary" full
  build_image "$image_dir/rootfs" "$tag" "Shipmoor Claim Check" \
    "Decide, criterion by criterion, whether a change meets its acceptance criteria; replay and verify its attestations offline"
  report "$image_dir/rootfs" "$tag"
fi
if wants verifier; then
  stage "$image_dir/rootfs-verifier" "$verifier_binary" verifier
  build_image "$image_dir/rootfs-verifier" "$verifier_tag" "Shipmoor Claim Check verifier" \
    "Replay, verify and admit Shipmoor Claim Check's attestations offline (replay, admit, verify-bundle, attach)"
  report "$image_dir/rootfs-verifier" "$verifier_tag"
  if [ "$dev" = no ] && [ -z "${SHIPMOOR_IMAGE_NO_BUDGET:-}" ]; then
    [ "$image_bytes" -le "$budget" ] ||
      die "the verifier image is $image_bytes bytes, over its budget of $budget (SHIPMOOR_VERIFIER_BUDGET)"
    say "the verifier image is within its budget: $image_bytes of $budget bytes"
  fi
fi
if [ "$smoke" = yes ]; then
  wants full && smoke "$tag" full
  wants verifier && smoke "$verifier_tag" verifier
  say "smoke checks passed"
fi
