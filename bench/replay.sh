#!/usr/bin/env bash
# Benchmark of `shipmoor replay` beside PyPI securesystemslib and PyPI sigstore verifying the
# same envelopes, all measured here, in one run of this script:
#
#   bash bench/replay.sh [N [P]]   # N: in-process iterations (default 200)
#                                  # P: per-process runs (default 30, or N when N is smaller)
#
# 1. Builds shipmoor (release) and the in-process bench (benches/replay.rs); makes a small git
#    repository with two `check.command` criteria; `claim-check --sign key` (an openssl P-256
#    key) writes a DSSE envelope and a keyed Sigstore bundle; a local Fulcio/Rekor mock
#    (tests/sigstore-mock, on 127.0.0.1) lets `claim-check --sign keyless` write a keyless
#    bundle (through a loopback front that keeps Rekor's canonical form of dsse entries, which
#    the mock does not and sigstore-python requires). Each output and its evidence store is
#    copied aside.
# 2. shipmoor in process: `cargo bench --bench replay`, N calls of `shipmoor::replay::replay`
#    per attestation, and of the signature check alone.
# 3. shipmoor per process: P runs of `shipmoor replay` per attestation.
# 4. securesystemslib on the DSSE envelope and sigstore-python (4.x) on the keyless bundle,
#    in one Python process (N times) and per process (P runs).
# 5. The table and the ratios.
#
# Replay does more than check a signature (the statement, every evidence record re-hashed, the
# fusion re-run), so the signature step alone is reported too.
#
# Every command must succeed (claim-check signs a READY verdict, each replay finds its
# attestation valid, the Python verifiers verify); anything else stops the script with a
# message naming the command.
#
#   SHIPMOOR_BIN=path bash bench/replay.sh   # skip the release build of shipmoor
#   QUICK=1 bash bench/replay.sh   # quick mode (bench/common.sh): N=3 and P=3, the debug build
#                                  # and benches/replay.rs built with the dev profile; not figures
#
# Needs: cargo, git, openssl, python3 with pip, Node.js 20+ with npm (the mock). Installs
# securesystemslib[crypto] and sigstore 4.x with pip when missing, and the mock's npm packages
# (from tests/sigstore-mock/package-lock.json) under the target directory. No network but the
# package registries and loopback; the mock is stopped before anything is timed.
set -euo pipefail
script_start=$(date +%s.%N)
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
root="$bench_root"
helper="$here/replay_bench.py"

stage() {
  echo
  echo "==> $*"
}

n="${1:-$(quick_or 200 3)}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N (in-process iterations) must be a positive integer, not '$n'"
p="${2:-$((n < 30 ? n : 30))}"
[[ "$p" =~ ^[1-9][0-9]*$ ]] || die "P (per-process runs) must be a positive integer, not '$p'"

# ---------------------------------------------------------------------------------------------
stage "checking tools"
need() {
  command -v "$1" >/dev/null 2>&1 || die "missing tool \`$1\`: $2"
}
need cargo "install the Rust toolchain (rustup)"
need git "apt-get install git"
need openssl "apt-get install openssl"
need python3 "apt-get install python3 python3-pip"
need node "the Sigstore mock needs Node.js 20 or newer (apt-get install nodejs npm)"
need npm "the Sigstore mock needs npm (apt-get install npm)"
need sha256sum "apt-get install coreutils"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 20)) || die "Node.js $(node --version) is too old: the Sigstore mock needs Node.js 20 or newer"
python3 -m pip --version >/dev/null 2>&1 || die "missing tool \`pip\` for python3: apt-get install python3-pip"

py_ok() {
  python3 - <<'PY' 2>/dev/null
import securesystemslib.dsse, securesystemslib.signer, cryptography, sigstore
assert sigstore.__version__.split(".")[0] == "4", sigstore.__version__
PY
}
if ! py_ok; then
  echo "    installing securesystemslib[crypto] and sigstore 4.x with pip"
  python3 -m pip install --quiet --disable-pip-version-check "securesystemslib[crypto]" "sigstore>=4,<5" ||
    die "\`python3 -m pip install 'securesystemslib[crypto]' 'sigstore>=4,<5'\` failed"
  py_ok || die "securesystemslib or sigstore 4.x still does not import after pip install"
fi
echo "    $(cargo --version); $(python3 --version); node $(node --version); $(openssl version)"
echo "    securesystemslib $(python3 -c 'import securesystemslib as s; print(s.__version__)'); sigstore $(python3 -c 'import sigstore as s; print(s.__version__)'); $(nproc) CPUs"

work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-replay-bench-XXXXXX")"
mock_pid=""
proxy_pid=""
stop_services() {
  # Closing their stdin stops the mock and the Rekor front; kill them in case it did not.
  exec 9>&- 8>&-
  local pid
  for pid in $mock_pid $proxy_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  mock_pid=""
  proxy_pid=""
}
cleanup() {
  stop_services
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/keys" "$work/att" "$work/res" "$work/tmp" "$work/logs"

# ---------------------------------------------------------------------------------------------
stage "building shipmoor and benches/replay.rs ($(quick_or release 'debug and dev profile, quick mode'))"
shipmoor_bin
bench_resource_uri
exe="$(bench_exe replay "$work/logs")"
target="$(bench_target_dir)"

stage "installing the Sigstore mock's npm packages (once, under $target/bench-tools)"
mock_src="$root/tests/sigstore-mock"
tools="$target/bench-tools/sigstore-mock"
stamp="$(cat "$mock_src/package.json" "$mock_src/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$tools/.installed" 2>/dev/null || true)" != "$stamp" ]]; then
  rm -rf "$tools"
  mkdir -p "$tools"
  cp "$mock_src/package.json" "$mock_src/package-lock.json" "$tools/"
  (cd "$tools" && npm ci --no-audit --no-fund --silent) >"$work/logs/npm.log" 2>&1 ||
    { cat "$work/logs/npm.log" >&2; die "npm ci failed in $tools"; }
  echo "$stamp" >"$tools/.installed"
else
  echo "    already installed"
fi

# ---------------------------------------------------------------------------------------------
stage "making a repository and signing its claim-check (key, then keyless)"
repo="$work/repo"
mkdir -p "$repo"
cd "$repo"
git init --quiet --initial-branch=main
git config user.name bench
git config user.email bench@example.com
git config commit.gpgsign false
printf '#!/bin/sh\ngrep -q fixed code.txt\n' >check_fixed.sh
printf '#!/bin/sh\ngrep -q documented README\n' >check_docs.sh
echo broken >code.txt
echo "draft" >README
git add -A
git commit --quiet -m base
base="$(git rev-parse HEAD)"
echo fixed >code.txt
echo "documented" >README
mkdir -p .shipmoor
cat >.shipmoor/acceptance.yaml <<'YAML'
version: 1
criteria:
  - id: fixed
    ac: The code is fixed.
    check:
      command: sh check_fixed.sh
  - id: documented
    ac: The change is documented.
    check:
      command: sh check_docs.sh
YAML
git add -A
git commit --quiet -m head
commit="$(git rev-parse HEAD)"
commit_sha256="$(git cat-file commit HEAD | sha256sum | cut -d' ' -f1)"

openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/keys/signer.pem" 2>/dev/null
openssl pkey -pubout -in "$work/keys/signer.pem" -out "$work/keys/signer.pub"
# Our keyid: base64(SHA-256(SPKI DER)).
keyid="$(openssl pkey -pubin -in "$work/keys/signer.pub" -outform DER | openssl dgst -sha256 -binary | base64 -w0)"
pub="$work/keys/signer.pub"

export SHIPMOOR_TMPDIR="$work/tmp" NO_COLOR=1
# signed_ready LOG CMD...: the claim-check CMD, logged in LOG (exit 0), reached READY, as its
# report's first line says (not READY WITH GAPS).
signed_ready() {
  local log="$1"
  shift
  grep -Eq '^Claim Check +READY +·' "$log" || { show_log "$log"; die "\`$*\` exited 0, but its verdict is not READY"; }
}
must_log "$work/logs/claim-key.log" "$bin" claim-check --base "$base" --sign key --key "$work/keys/signer.pem"
signed_ready "$work/logs/claim-key.log" "$bin" claim-check --base "$base" --sign key
grep -q "· key" "$work/logs/claim-key.log" || { cat "$work/logs/claim-key.log" >&2; die "claim-check did not sign with the key"; }
cp .shipmoor/claim-check.vsa.dsse.json "$work/att/keyed.dsse.json"
cp .shipmoor/claim-check.vsa.sigstore.json "$work/att/keyed.sigstore.json"
cp -r .shipmoor/evidence "$work/att/keyed-evidence"
echo "    key:     $(grep -m1 '^Claim Check' "$work/logs/claim-key.log")"

issuer="https://oidc.shipmoor.test"
subject="https://github.com/shipmoor/claim-check/.github/workflows/ci.yml@refs/heads/main"
mkdir -p "$work/mock"
mkfifo "$work/mock/stdin"
NODE_PATH="$tools/node_modules" node "$mock_src/server.js" "$work/mock" \
  <"$work/mock/stdin" >"$work/mock/url" 2>"$work/mock/server.log" &
mock_pid=$!
exec 9>"$work/mock/stdin" # the mock serves until its stdin closes
for _ in $(seq 1 600); do
  [[ -s "$work/mock/url" ]] && break
  kill -0 "$mock_pid" 2>/dev/null || break
  sleep 0.1
done
mock_url="$(head -1 "$work/mock/url" 2>/dev/null || true)"
[[ "$mock_url" == http://127.0.0.1:* ]] ||
  { cat "$work/mock/server.log" >&2; die "the Sigstore mock did not start (first line: '$mock_url')"; }
[[ -s "$work/mock/trusted_root.json" ]] || die "the Sigstore mock wrote no trusted_root.json"
echo "    mock Fulcio/Rekor at $mock_url"
# Rekor keeps a dsse entry's verifier in canonical form (the certificate as LF PEM); the mock
# keeps it as proposed, which sigstore-python refuses. A front on loopback canonicalizes it,
# as Rekor does, before the mock logs the entry (see replay_bench.py, rekor-proxy).
mkfifo "$work/mock/proxy-stdin"
python3 "$helper" rekor-proxy "$mock_url" "$work/mock/proxy-url" \
  <"$work/mock/proxy-stdin" 2>"$work/mock/proxy.log" &
proxy_pid=$!
exec 8>"$work/mock/proxy-stdin"
for _ in $(seq 1 300); do
  [[ -s "$work/mock/proxy-url" ]] && break
  kill -0 "$proxy_pid" 2>/dev/null || break
  sleep 0.1
done
rekor_url="$(head -1 "$work/mock/proxy-url" 2>/dev/null || true)"
[[ "$rekor_url" == http://127.0.0.1:* ]] ||
  { cat "$work/mock/proxy.log" >&2; die "the Rekor front did not start"; }
echo "    Rekor front (canonical dsse verifiers) at $rekor_url"
token="$(python3 "$helper" jwt "$issuer" "$subject")"
must_log "$work/logs/claim-keyless.log" env SIGSTORE_ID_TOKEN="$token" SHIPMOOR_FULCIO_URL="$mock_url" \
  SHIPMOOR_REKOR_URL="$rekor_url" "$bin" claim-check --base "$base" --sign keyless
signed_ready "$work/logs/claim-keyless.log" "$bin" claim-check --base "$base" --sign keyless
grep -q "· keyless" "$work/logs/claim-keyless.log" ||
  { cat "$work/logs/claim-keyless.log" >&2; die "claim-check did not sign keyless"; }
cp .shipmoor/claim-check.vsa.sigstore.json "$work/att/keyless.sigstore.json"
cp -r .shipmoor/evidence "$work/att/keyless-evidence"
cp "$work/mock/trusted_root.json" "$work/att/trusted_root.json"
trusted_root="$work/att/trusted_root.json"
python3 "$helper" trust-config "$trusted_root" "$mock_url" "$work/att/trust_config.json"
trust_config="$work/att/trust_config.json"
echo "    keyless: $(grep -m1 '^Claim Check' "$work/logs/claim-keyless.log")"
# Everything below is offline: stop the mock so it takes no CPU while timing.
stop_services
cd "$work"
for f in keyed.dsse.json keyed.sigstore.json keyless.sigstore.json; do
  printf '    %-22s %6d bytes\n' "$f" "$(wc -c <"$work/att/$f")"
done
echo "    evidence: $(find "$work/att/keyed-evidence" -type f | wc -l) files (keyed run), $(find "$work/att/keyless-evidence" -type f | wc -l) files (keyless run)"

# One replay of each through the CLI, shown, before anything is timed.
replay_keyed_env=("$bin" replay "$work/att/keyed.dsse.json" --key "$pub" --evidence "$work/att/keyed-evidence" --repo "$repo")
replay_keyed_bundle=("$bin" replay "$work/att/keyed.sigstore.json" --key "$pub" --evidence "$work/att/keyed-evidence" --repo "$repo")
replay_keyless=("$bin" replay "$work/att/keyless.sigstore.json" --certificate-identity "$subject"
  --certificate-oidc-issuer "$issuer" --trusted-root "$trusted_root" --evidence "$work/att/keyless-evidence" --repo "$repo")
must_log "$work/logs/replay-keyless.txt" "${replay_keyless[@]}"
sed 's/^/    | /' "$work/logs/replay-keyless.txt"
must_log "$work/logs/replay-keyed-env.txt" "${replay_keyed_env[@]}"
must_log "$work/logs/replay-keyed-bundle.txt" "${replay_keyed_bundle[@]}"

# ---------------------------------------------------------------------------------------------
stage "shipmoor replay, in process (benches/replay.rs, $n calls each)"
bench_run "$work/logs/bench-run.log" "" "$exe" \
  --iterations "$n" --commit "$commit" --commit-sha256 "$commit_sha256" \
  --envelope "$work/att/keyed.dsse.json" --keyed-bundle "$work/att/keyed.sigstore.json" \
  --key "$pub" --evidence "$work/att/keyed-evidence" \
  --keyless-bundle "$work/att/keyless.sigstore.json" --identity "$subject" --issuer "$issuer" \
  --trusted-root "$trusted_root" --keyless-evidence "$work/att/keyless-evidence" \
  --json "$work/res/shipmoor-inprocess.json"

# ---------------------------------------------------------------------------------------------
stage "shipmoor replay, per process ($p runs each)"
python3 "$helper" per-process "$p" shipmoor "DSSE envelope (key)" "replay CLI, 6 steps (rerun skipped)" \
  "$work/res/shipmoor-pp-envelope.json" -- "${replay_keyed_env[@]}"
python3 "$helper" per-process "$p" shipmoor "keyed bundle" "replay CLI, 6 steps (rerun skipped)" \
  "$work/res/shipmoor-pp-keyed-bundle.json" -- "${replay_keyed_bundle[@]}"
python3 "$helper" per-process "$p" shipmoor "keyless bundle" "replay CLI, 6 steps (rerun skipped)" \
  "$work/res/shipmoor-pp-keyless.json" -- "${replay_keyless[@]}"

# ---------------------------------------------------------------------------------------------
stage "securesystemslib on the DSSE envelope ($n in process, $p per process)"
python3 "$helper" sslib-inprocess "$n" "$work/att/keyed.dsse.json" "$pub" "$keyid" "$work/res/sslib-inprocess.json"
python3 "$helper" per-process "$p" securesystemslib "DSSE envelope (key)" "python3 process: import, load key, verify" \
  "$work/res/sslib-pp.json" -- python3 "$helper" sslib-once "$work/att/keyed.dsse.json" "$pub" "$keyid"

stage "sigstore-python on the keyless bundle ($n in process, $p per process)"
python3 "$helper" sigstore-inprocess "$n" "$work/att/keyless.sigstore.json" "$trust_config" \
  "$subject" "$issuer" "$commit_sha256" "$work/res/sigstore-inprocess.json"
python3 "$helper" per-process "$p" sigstore-python "keyless bundle" "python3 process: import, trust config, verify" \
  "$work/res/sigstore-pp.json" -- python3 "$helper" sigstore-once "$work/att/keyless.sigstore.json" \
  "$trust_config" "$subject" "$issuer" "$commit_sha256"
# The CLI verifies the bundle, then refuses the statement's `gitCommit` subject digest (see the
# note under the table): timed to that refusal, which comes after every signature check.
python3 "$helper" per-process "$p" "sigstore-python CLI" "keyless bundle" "python -m sigstore verify identity --offline" \
  "$work/res/sigstore-cli-pp.json" --expect-stderr "malformed in-toto statement" -- \
  python3 -m sigstore --trust-config "$trust_config" verify identity --offline \
  --bundle "$work/att/keyless.sigstore.json" --cert-identity "$subject" --cert-oidc-issuer "$issuer" \
  "sha256:$commit_sha256"

# ---------------------------------------------------------------------------------------------
stage "results$(quick_or '' ' (QUICK: debug build, not figures)')"
python3 "$helper" table "$work"/res/*.json
cat <<'NOTE'

What is timed:
  - shipmoor replay runs 6 steps: parse, signature, statement (type, predicate, subject commit
    and the commit object's SHA-256, verifier), evidence (every cited record and blob read
    from the evidence store and re-hashed, the floor's rule re-run), fusion (the policy re-run
    to the recorded verdict); step 6 (rerun) is skipped. securesystemslib and sigstore-python
    check the signature only (sigstore-python: certificate chain, SCT, identity policy, Rekor
    inclusion proof and SET, DSSE signature, the subject's digest). Compare them with
    "signature step alone" for like against like.
  - shipmoor's keyless signature step (attest::sigstore::verify_bundle) reads and parses the
    trusted root on every call; sigstore-python's in-process Verifier keeps its trusted root,
    like the "sigstore-verify alone, root loaded once" row.
  - Per process: the whole command, process start to exit (shipmoor also runs `git rev-parse`
    and `git cat-file` to find the commit; python includes interpreter start and imports).
NOTE
script_end=$(date +%s.%N)
printf '\nWhole script: %s s (N=%d in process, P=%d per process)\n' "$(python3 -c "print(f'{$script_end - $script_start:.1f}')")" "$n" "$p"
quick_note
