#!/usr/bin/env bash
# Benchmark of `shipmoor admit` beside `shipmoor replay` of the same attestation, in one run of
# this script:
#
#   bash bench/admit.sh [N [P]]   # N: in-process iterations (default 200)
#                                 # P: per-process runs (default 30)
#
# 1. Builds shipmoor (release) and benches/admit.rs; makes a small git repository with one
#    `check.command` criterion; `claim-check --sign key` (an openssl P-256 key) signs a READY
#    VSA for the commit and an image digest; writes a policy that trusts the key, with the
#    example Rego module (examples/admit/extra.rego) beside it.
# 2. In process: `cargo bench --bench admit`: N calls of replay, of the decision with the policy
#    loaded once, and of the policy's load plus the decision.
# 3. Per process: P runs each of `shipmoor replay BUNDLE --key` and `shipmoor admit --attestation
#    BUNDLE` (both read their files, verify, print).
# 4. From a registry: Debian's docker-registry on 127.0.0.1 (plain HTTP), a small image pushed
#    with skopeo, the VSA attached with `shipmoor attach`; P runs of `shipmoor admit --image`
#    (resolve the tag, list the referrers, pull the bundle, decide).
# 5. The ratios: admit / replay, per process and in process. The target: admit from a file
#    within 1.5x of replay.
#
# Needs: cargo, git, openssl, python3, docker-registry and skopeo (apt-get install
# docker-registry skopeo). No network but loopback.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

die() {
  echo "bench/admit.sh: $*" >&2
  exit 1
}
stage() {
  echo
  echo "==> $*"
}

n="${1:-200}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N (in-process iterations) must be a positive integer, not '$n'"
p="${2:-30}"
[[ "$p" =~ ^[1-9][0-9]*$ ]] || die "P (per-process runs) must be a positive integer, not '$p'"

stage "checking tools"
for t in cargo git openssl python3 skopeo; do
  command -v "$t" >/dev/null 2>&1 || die "missing tool \`$t\` (apt-get install $t)"
done
registry_bin=/usr/bin/docker-registry
[[ -x "$registry_bin" ]] || die "missing $registry_bin (apt-get install docker-registry)"

work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-admit-bench-XXXXXX")"
registry_pid=""
cleanup() {
  local status=$?
  if [[ -n "$registry_pid" ]]; then
    kill "$registry_pid" 2>/dev/null || true
    wait "$registry_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stage "building shipmoor (release) and benches/admit.rs"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
cargo bench --quiet --no-run --bench admit --manifest-path "$root/Cargo.toml" 2>"$work/bench-build.log" ||
  { cat "$work/bench-build.log" >&2; die "cargo bench --no-run failed"; }
target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
bin="$target/release/shipmoor"

stage "signing a READY VSA for a commit and an image"
repo="$work/repo"
mkdir -p "$repo" && cd "$repo"
git init --quiet --initial-branch=main
git config user.name bench && git config user.email bench@example.com && git config commit.gpgsign false
git remote add origin https://github.com/acme/shop.git
echo "limit = 0" >limits.txt
git add -A && git commit --quiet -m base
base="$(git rev-parse HEAD)"
echo "limit = 10" >limits.txt
mkdir -p checks .shipmoor
echo "grep -q 'limit = 10' limits.txt" >checks/limit.sh
printf 'version: 1\ncriteria:\n  - id: limit-is-ten\n    ac: The limit is ten.\n    check:\n      command: sh checks/limit.sh\n' >.shipmoor/acceptance.yaml
git add -A && git commit --quiet -m head
head="$(git rev-parse HEAD)"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/key.pem" 2>/dev/null
openssl pkey -in "$work/key.pem" -pubout -out "$work/key.pub"

# The image: one tiny layer in an OCI layout, its manifest digest the VSA's second subject.
layout="$work/layout"
python3 - "$layout" <<'PY'
import gzip, hashlib, io, json, os, sys, tarfile
out = sys.argv[1]
blobs = os.path.join(out, "blobs", "sha256")
os.makedirs(blobs)
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return {"digest": "sha256:" + d, "size": len(data)}
raw = io.BytesIO()
with tarfile.open(fileobj=raw, mode="w") as t:
    data = b"shipmoor admit bench\n"
    info = tarfile.TarInfo("hello.txt"); info.size = len(data); info.mtime = 0
    t.addfile(info, io.BytesIO(data))
layer_tar = raw.getvalue()
layer = blob(gzip.compress(layer_tar, mtime=0))
config = blob(json.dumps({"architecture": "amd64", "os": "linux",
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer_tar).hexdigest()]},
    "config": {}}).encode())
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": dict(config, mediaType="application/vnd.oci.image.config.v1+json"),
    "layers": [dict(layer, mediaType="application/vnd.oci.image.layer.v1.tar+gzip")]}).encode()
m = blob(manifest)
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(out, "oci-layout"), "w"))
json.dump({"schemaVersion": 2, "manifests": [dict(m, mediaType="application/vnd.oci.image.manifest.v1+json",
    annotations={"org.opencontainers.image.ref.name": "1.0"})]}, open(os.path.join(out, "index.json"), "w"))
PY
image_digest="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$layout/index.json")"
"$bin" claim-check --base "$base" --sign key --key "$work/key.pem" --subject "shop=$image_digest" --quiet >/dev/null ||
  die "claim-check did not reach READY"
bundle="$repo/.shipmoor/claim-check.vsa.sigstore.json"
mkdir -p "$work/admission"
cp "$work/key.pub" "$work/admission/claim-check.pub"
cat >"$work/admission/policy.yaml" <<'EOF'
version: 1
allowed_verdicts: ["READY"]
floor_required: [limit-is-ten]
min_policy_version: v3
max_age: 1d
repositories: ["git+https://github.com/acme/*"]
signers:
  - key: claim-check.pub
rego: extra.rego
EOF
cp "$root/examples/admit/extra.rego" "$work/admission/extra.rego"
policy="$work/admission/policy.yaml"
"$bin" admit --policy "$policy" --attestation "$bundle" --subject "$image_digest" >/dev/null ||
  die "the VSA is not admitted"

stage "in process"
(cd "$root" && cargo bench --quiet --bench admit -- --iterations "$n" --attestation "$bundle" \
  --key "$work/key.pub" --evidence "$repo/.shipmoor/evidence" --commit "$head" \
  --policy "$policy" --subject "$image_digest")

# P runs of a command; prints the median wall time in ms.
per_process() {
  python3 - "$p" "$@" <<'PY'
import statistics, subprocess, sys, time
runs = int(sys.argv[1]); cmd = sys.argv[2:]
subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # warm the page cache
ms = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    ms.append((time.perf_counter() - t) * 1e3)
print(f"{statistics.median(ms):.3f}")
PY
}

stage "per process ($p runs each), median"
cd "$repo"
replay_ms="$(per_process "$bin" replay "$bundle" --key "$work/key.pub" --commit "$head")"
echo "  shipmoor replay BUNDLE --key                 ${replay_ms} ms"
admit_ms="$(per_process "$bin" admit --policy "$policy" --attestation "$bundle" --subject "$image_digest")"
echo "  shipmoor admit --attestation BUNDLE          ${admit_ms} ms"

stage "from a registry on 127.0.0.1 (docker-registry, plain HTTP)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
mkdir -p "$work/registry"
cat >"$work/registry.yml" <<EOF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
EOF
"$registry_bin" serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v2/')" 2>/dev/null && break
  sleep 0.1
done
ref="127.0.0.1:$port/acme/shop:1.0"
skopeo copy --quiet --dest-tls-verify=false "oci:$layout:1.0" "docker://$ref" >/dev/null
"$bin" attach "$ref" --attestation "$bundle" --allow-http-registry >/dev/null
image_ms="$(per_process "$bin" admit --policy "$policy" --image "$ref" --allow-http-registry)"
echo "  shipmoor admit --image REF                   ${image_ms} ms"

stage "ratios"
python3 - "$replay_ms" "$admit_ms" "$image_ms" <<'PY'
import sys
replay, admit, image = map(float, sys.argv[1:])
print(f"  admit from a file / replay, per process:   {admit / replay:.2f}x  (target: at most 1.5x)")
print(f"  admit from the registry / replay:          {image / replay:.2f}x")
PY
