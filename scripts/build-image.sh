#!/usr/bin/env bash
# Builds the container image of Shipmoor Claim Check with buildah: no Docker engine, no registry.
#
#   scripts/build-image.sh [--binary PATH] [--tag TAG] [--locked] [--smoke]
#
# 1. The static binary: scripts/release-build.sh (the release workflow's reproducible build:
#    `cargo build --release` for <arch>-unknown-linux-gnu with `-C target-feature=+crt-static`,
#    glibc statically linked, no dynamic loader) in its own target dir, target/static
#    (SHIPMOOR_STATIC_TARGET_DIR), so it never fights the debug builds.
#    --locked passes --locked to cargo (releases). --binary PATH takes a binary built elsewhere
#    instead; it must be static too.
# 2. The root filesystem, staged in target/image/rootfs/: the binary, the Docker action's
#    entrypoint (container/entrypoint.sh), Debian's git with the shared libraries `ldd` lists,
#    Debian's dynamic busybox (/bin/sh and its applets; it shares git's libc, 1.1 MB less than
#    busybox-static), CA certificates, /etc/gitconfig with
#    safe.directory = *, passwd/group/nsswitch.conf/hosts, /root and /tmp (1777), and the
#    Debian copyright files of every package something was taken from.
# 3. `buildah --storage-driver vfs bud` of the Dockerfile from the repository's root
#    (.dockerignore sends only target/image/rootfs), with the last commit's time as the image's
#    timestamp; skipped when an image with this tag already holds exactly this content.
# 4. Prints the image's size; --smoke then runs `shipmoor --version`, `git --version`, a replay
#    of tests/fixtures/replay/format-1 and an admission of tests/fixtures/admit inside it
#    (`buildah run --isolation chroot`).
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
tag=""
smoke=no
locked=()
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "--binary needs a path"; binary=$2; shift 2 ;;
    --binary=*) binary=${1#*=}; shift ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; tag=$2; shift 2 ;;
    --tag=*) tag=${1#*=}; shift ;;
    --smoke) smoke=yes; shift ;;
    --locked) locked=(--locked); shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | sed -n 1p)
[ -n "$version" ] || die "no version in Cargo.toml"
tag=${tag:-shipmoor/claim-check:$version}
storage=(--storage-driver "${SHIPMOOR_STORAGE_DRIVER:-vfs}")
image_dir=$repo/target/image
rootfs=$image_dir/rootfs
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
# 1. The static binary
# ---------------------------------------------------------------------------------------------
if [ -z "$binary" ]; then
  target=${SHIPMOOR_STATIC_TARGET:-$(uname -m)-unknown-linux-gnu}
  target_dir=${SHIPMOOR_STATIC_TARGET_DIR:-$repo/target/static}
  say "building the static binary (scripts/release-build.sh --target $target, CARGO_TARGET_DIR=$target_dir)"
  # The release workflow's build, path maps included: the image holds the release's bytes.
  binary=$(bash scripts/release-build.sh "${locked[@]}" --target "$target" --target-dir "$target_dir")
fi
case $binary in /*) ;; *) binary=$caller/$binary ;; esac
[ -x "$binary" ] || die "no binary at $binary"
is_static "$binary" || die "$binary is not statically linked (ldd: $(ldd "$binary" 2>&1 | sed -n 1,3p | tr '\n' ' '))"
binary_version=$("$binary" --version) || die "$binary --version failed"
say "binary: $binary ($binary_version, $(du -h "$binary" | cut -f1))"

# ---------------------------------------------------------------------------------------------
# 2. The root filesystem
# ---------------------------------------------------------------------------------------------
rm -rf "$rootfs"
mkdir -p "$rootfs"/{bin,etc/ssl/certs,usr/bin,usr/local/bin,usr/share/doc,root,tmp}
chmod 0700 "$rootfs/root"
chmod 1777 "$rootfs/tmp"

packages=()
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
  while read -r lib; do
    [ -n "$lib" ] || continue
    [ -e "$rootfs$lib" ] && continue
    install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
    note_package "$lib"
  done < <(ldd "$src" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
}

install -m 0755 "$binary" "$rootfs/usr/local/bin/shipmoor"
install -m 0755 container/entrypoint.sh "$rootfs/usr/local/bin/shipmoor-action"
copy_with_libs "$git_bin" /usr/bin/git
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

cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
cat >"$rootfs/etc/nsswitch.conf" <<'EOF'
passwd: files
group: files
hosts: files dns
EOF
cat >"$rootfs/etc/hosts" <<'EOF'
127.0.0.1 localhost
::1 localhost
EOF
# The workspace of a container job or Docker action is mounted from the runner's user: trust it.
cat >"$rootfs/etc/gitconfig" <<'EOF'
[safe]
	directory = *
EOF

# Licences of what was copied from Debian (git and busybox are GPL-2.0: the copyright files say
# where their sources are).
for pkg in $(printf '%s\n' "${packages[@]}" | sort -u); do
  pkg_base=${pkg%%:*}
  if [ -f "/usr/share/doc/$pkg_base/copyright" ]; then
    install -D -m 0644 "/usr/share/doc/$pkg_base/copyright" "$rootfs/usr/share/doc/$pkg_base/copyright"
  fi
done

# ---------------------------------------------------------------------------------------------
# 3. The image
# ---------------------------------------------------------------------------------------------
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
timestamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
content=$(
  {
    cat Dockerfile .dockerignore
    echo "$version $revision $timestamp"
    (cd "$rootfs" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort)
    (cd "$rootfs" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -d' ' -f1
)
existing=$(buildah "${storage[@]}" inspect --type image \
  --format '{{index .OCIv1.Config.Labels "dev.shipmoor.content"}}' "$tag" 2>/dev/null || true)
if [ "$existing" = "$content" ]; then
  say "image $tag already holds this content ($content): not rebuilt"
else
  say "building image $tag"
  previous=$(buildah "${storage[@]}" inspect --type image --format '{{.FromImageID}}' "$tag" 2>/dev/null || true)
  buildah "${storage[@]}" bud --quiet \
    --file Dockerfile \
    --tag "$tag" \
    --timestamp "$timestamp" \
    --build-arg "VERSION=$version" \
    --build-arg "REVISION=$revision" \
    --label "dev.shipmoor.content=$content" \
    "$repo" >/dev/null
  # The image this tag named before, if no name is left on it, is removed (unless in use).
  if [ -n "$previous" ] &&
    buildah "${storage[@]}" images --filter dangling=true --noheading --no-trunc --format '{{.ID}}' 2>/dev/null |
    grep -q "$previous"; then
    buildah "${storage[@]}" rmi "$previous" >/dev/null 2>&1 || true
  fi
fi

# ---------------------------------------------------------------------------------------------
# 4. Size and smoke checks
# ---------------------------------------------------------------------------------------------
image_size=$(buildah "${storage[@]}" images --format '{{.Size}}' "$tag" | sed -n 1p)
rootfs_bytes=$(du -sb "$rootfs" | cut -f1)
gzip_bytes=$(tar -C "$rootfs" -cf - . | gzip -6 | wc -c)
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo "image $tag: $image_size ($(mib "$rootfs_bytes") uncompressed, $(mib "$gzip_bytes") as a gzip layer); shipmoor $(mib "$(stat -c %s "$rootfs/usr/local/bin/shipmoor")"), git and its libraries $(mib "$(cat "$rootfs/usr/bin/git" "$rootfs"/lib*/*/* "$rootfs"/lib64/* 2>/dev/null | wc -c)"), busybox $(mib "$(stat -c %s "$rootfs/bin/busybox")")"

if [ "$smoke" = yes ]; then
  ctr=$(buildah "${storage[@]}" from --quiet "$tag")
  trap 'buildah "${storage[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
  run() { buildah "${storage[@]}" run --isolation chroot "$@"; }
  say "smoke: shipmoor --version"
  run "$ctr" -- shipmoor --version
  say "smoke: git --version"
  run "$ctr" -- git --version
  say "smoke: shipmoor replay of tests/fixtures/replay/format-1"
  run -v "$repo/tests/fixtures/replay/format-1:/fixture:ro" --workingdir /fixture "$ctr" -- \
    shipmoor replay claim-check.vsa.json --allow-unsigned \
    --commit fbac99915b71a5f8645bf21e20c54f0cfb18a1cb --evidence evidence
  say "smoke: shipmoor admit of tests/fixtures/admit"
  run -v "$repo/tests/fixtures/admit:/fixture:ro" --workingdir /fixture "$ctr" -- \
    shipmoor admit --policy policy.yaml --attestation vsa.sigstore.json \
    --subject "$(cat "$repo/tests/fixtures/admit/subject.txt")"
  say "smoke checks passed"
fi
