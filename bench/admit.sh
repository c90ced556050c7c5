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
# Every command must succeed: claim-check reaches READY (exit 0), admit allows (exit 0), replay
# finds the VSA valid (exit 0), the registry, skopeo and attach work; anything else stops the
# script with a message naming the command.
#
#   SHIPMOOR_BIN=path bash bench/admit.sh   # skip the release build of shipmoor
#   QUICK=1 bash bench/admit.sh   # quick mode (bench/common.sh): N=3, P=3, the debug build and
#                                 # benches/admit.rs built with the dev profile; not figures
#
# Needs: cargo, git, openssl, python3, docker-registry and skopeo (apt-get install
# docker-registry skopeo). No network but loopback.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
root="$bench_root"

stage() {
  echo
  echo "==> $*"
}

n="${1:-$(quick_or 200 3)}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N (in-process iterations) must be a positive integer, not '$n'"
p="${2:-$(quick_or 30 3)}"
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

stage "building shipmoor and benches/admit.rs ($(quick_or release 'debug and dev profile, quick mode'))"
shipmoor_bin
exe="$(bench_exe admit "$work")"

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
code=0
"$bin" claim-check --base "$base" --sign key --key "$work/key.pem" --subject "shop=$image_digest" --quiet \
  --format json >"$work/claim.json" || code=$?
expect_verdict "$code" "$work/claim.json" READY "\`$bin claim-check --base $base --sign key\` in $repo"
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
must_log "$work/admit-once.log" "$bin" admit --policy "$policy" --attestation "$bundle" --subject "$image_digest"

stage "in process$(quick_or '' ' (QUICK: dev profile, not figures)')"
bench_run "$work/bench-admit.log" "" "$exe" --iterations "$n" --attestation "$bundle" \
  --key "$work/key.pub" --evidence "$repo/.shipmoor/evidence" --commit "$head" \
  --policy "$policy" --subject "$image_digest"

# P runs of a command, each of which must exit 0; prints the median wall time in ms. A run that
# fails stops the benchmark, naming the command and its exit code.
per_process() {
  local out code=0
  out="$(python3 - "$p" "$@" <<'PY'
import statistics, subprocess, sys, time
runs = int(sys.argv[1]); cmd = sys.argv[2:]
def run():
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace")[-4000:])
        sys.exit(f"bench/admit.sh: `{' '.join(cmd)}` failed (exit {r.returncode})")
run()  # warm the page cache
ms = []
for _ in range(runs):
    t = time.perf_counter()
    run()
    ms.append((time.perf_counter() - t) * 1e3)
print(f"{statistics.median(ms):.3f}")
PY
)" || code=$?
  [ "$code" = 0 ] || die "per-process runs of \`$*\` failed (above)"
  echo "$out"
}

stage "per process ($p runs each), median$(quick_or '' ' (QUICK: debug build, not figures)')"
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
up=""
for _ in $(seq 50); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v2/')" 2>/dev/null; then
    up=1
    break
  fi
  kill -0 "$registry_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$up" ] || { show_log "$work/registry.log"; die "\`$registry_bin serve $work/registry.yml\` did not answer on 127.0.0.1:$port"; }
ref="127.0.0.1:$port/acme/shop:1.0"
must_log "$work/skopeo.log" skopeo copy --quiet --dest-tls-verify=false "oci:$layout:1.0" "docker://$ref"
must_log "$work/attach.log" "$bin" attach "$ref" --attestation "$bundle" --allow-http-registry
image_ms="$(per_process "$bin" admit --policy "$policy" --image "$ref" --allow-http-registry)"
echo "  shipmoor admit --image REF                   ${image_ms} ms"

stage "ratios$(quick_or '' ' (QUICK: debug build, not figures)')"
python3 - "$replay_ms" "$admit_ms" "$image_ms" <<'PY'
import sys
replay, admit, image = map(float, sys.argv[1:])
print(f"  admit from a file / replay, per process:   {admit / replay:.2f}x  (target: at most 1.5x)")
print(f"  admit from the registry / replay:          {image / replay:.2f}x")
PY
quick_note
