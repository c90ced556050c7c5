#!/usr/bin/env bash
# Sets up and runs Shipmoor Claim Check on the bundled example: a small Python refund service
# whose change claims four acceptance criteria. It builds `shipmoor`, installs pytest when it is
# missing, makes a fresh git repository under examples/work/refund (a base commit, then the
# change as the head commit), and runs `shipmoor claim-check` in it.
#
# The example is BLOCKED on purpose: one criterion is met (a tagged test flips from failing to
# passing), one is not (its tagged test still fails at head), one has no test yet (an author
# check with its tag) and one is optional. This script exits 0 when the run reached a verdict.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
work="$here/work/refund"

echo "==> building shipmoor"
cargo build --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/debug/shipmoor"

if ! python3 -m pytest --version >/dev/null 2>&1 && ! command -v pytest >/dev/null 2>&1; then
  echo "==> installing pytest"
  python3 -m pip install --quiet pytest
fi

echo "==> making the example repository at $work"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
git init --quiet --initial-branch=main
git config user.name "Example Author"
git config user.email "author@example.com"
cp -R "$here/refund/base/." .
git add -A
git commit --quiet -m "Refund service before the change"
base="$(git rev-parse HEAD)"
git switch --quiet -c refund-endpoint
cp -R "$here/refund/head/." .
mkdir -p .shipmoor
cp "$here/refund/acceptance.yaml" .shipmoor/acceptance.yaml
git add -A
git commit --quiet -m "Add refunds"
# Where head lives, as the signed statement names it (`resourceUri`): a real checkout has its
# remote; the example says where it would be fetched from.
git remote add origin https://github.com/example/refund

echo "==> shipmoor claim-check --base ${base:0:7}"
echo
set +e
"$bin" claim-check --base "$base"
code=$?
set -e
echo
case "$code" in
  0|1|4)
    echo "exit $code. Outputs in $work/.shipmoor: verify.md, claim-check.fixes.json, claim-check.vsa.json, evidence/"
    exit 0 ;;
  *)
    echo "claim-check did not reach a verdict (exit $code)" >&2
    exit "$code" ;;
esac
