#!/usr/bin/env bash
# Benchmark of the floor on two cargo projects, measured side by side in one run:
#
#   claim-check   `shipmoor claim-check` of the change, cold (no target dir anywhere);
#   plain         one plain `cargo test` of the bound test at head, cold (what a CI job runs);
#   naive         the naive claim: two cold builds and runs of the bound test, one at base with
#                 head's test file laid over it (where the test must fail, as a test fails:
#                 cargo's exit 101 and a failed test result), one at head;
#   warm          claim-check again with the checkout's own `target/` already built (as after
#                 a cache restore or an earlier `cargo test` step), beside the cold claim-check;
#   cold-off, warm-off   the same two runs with `--sandbox off`: every claim-check run above is
#                 sandboxed (`--sandbox require`), so these give the sandbox's own cost.
#
# and the ratios claim-check / plain, naive / plain (the target is claim-check ≤ 1.2 × plain),
# warm / cold claim-check (the target is ≤ 0.5), and sandboxed / off, cold and warm (the target
# is ≤ 1.03). Also each run's runtime rows and the engine's overhead (total time minus the time
# of the commands it ran). Every claim-check must reach the change's verdict, READY; any other
# verdict, an exit of 2 (input error) or 3 (crash), and any failing cargo command stop the
# script with a non-zero exit and a message naming the command: a broken benchmark never prints
# a ratio.
#
# The projects:
#   generated   a workspace of MEMBERS crates depending on `itoa` and `regex`, a fix in `m1`
#               and a tagged integration test for it;
#   globset     the published sources of `globset` 0.4.22 (cargo downloads them from crates.io
#               into its registry cache), committed into a temporary repository with a bug at
#               base, its fix at head, and a tagged integration test.
#
#   bash bench/floor.sh [MEMBERS]     # MEMBERS: workspace crates to generate (default 6)
#   SHIPMOOR_BIN=target/debug/shipmoor bash bench/floor.sh   # skip the release build
#   ROUNDS=3 bash bench/floor.sh      # repeat the four measurements, interleaved; medians
#   QUICK=1 bash bench/floor.sh       # quick mode (bench/common.sh): one round, the generated
#                                     # workspace only, of 2 crates with no dependencies (no
#                                     # crates.io), the debug build; its ratios are not figures
#
# On a shared machine the load changes between measurements taken minutes apart: several
# interleaved rounds and their medians give steadier ratios than one round.
#
# crates.io must be reachable (the first run downloads the crates into cargo's cache; the
# downloads are not timed), except in quick mode. Nothing here asserts a time: it prints what
# it measured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
members="${1:-$(quick_or 6 2)}"
[[ "$members" =~ ^[1-9][0-9]*$ ]] || die "MEMBERS must be a positive integer, not '$members'"
rounds="${ROUNDS:-1}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
# The projects measured: quick mode leaves out globset (a crate downloaded from crates.io), and
# its generated crates depend on nothing.
if is_quick; then projects=(generated); else projects=(generated globset); fi
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

shipmoor_bin
bench_resource_uri
# The projects' own builds are cold: no shared target directory.
unset CARGO_TARGET_DIR
tag="$(python3 -c 'import hashlib;print("AC-CLAMP-HIGH-"+hashlib.sha256(b"claim-check/tag/v1\0clamp-high").hexdigest()[:4])')"
tag_ident="$(echo "$tag" | tr 'A-Z-' 'a-z_')"
now() { date +%s.%N; }

new_repo() {
  mkdir -p "$1"
  git -C "$1" init --quiet --initial-branch=main
  git -C "$1" config user.name bench
  git -C "$1" config user.email bench@example.com
}

acceptance() {
  mkdir -p .shipmoor
  printf 'version: 1\ncriteria:\n  - id: clamp-high\n    ac: Values above the range are clamped to its top.\n' > .shipmoor/acceptance.yaml
}

# ---- the generated workspace -------------------------------------------------------------
gen="$work/generated"
new_repo "$gen"
cd "$gen"
{
  echo '[workspace]'
  echo 'resolver = "2"'
  printf 'members = ['
  for i in $(seq 1 "$members"); do printf '"m%d", ' "$i"; done
  echo ']'
} > Cargo.toml
for i in $(seq 1 "$members"); do
  mkdir -p "m$i/src" "m$i/tests"
  cat > "m$i/Cargo.toml" <<TOML
[package]
name = "m$i"
version = "0.1.0"
edition = "2021"

[dependencies]
TOML
  is_quick || printf 'itoa = "1"\nregex = "1"\n' >> "m$i/Cargo.toml"
  {
    if is_quick; then
      echo 'pub fn render(n: u64) -> String { n.to_string() }'
      echo 'pub fn is_word(s: &str) -> bool { !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '"'_'"') }'
    else
      echo 'pub fn render(n: u64) -> String { itoa::Buffer::new().format(n).to_string() }'
      echo 'pub fn is_word(s: &str) -> bool { regex::Regex::new(r"^\w+$").unwrap().is_match(s) }'
    fi
    echo 'pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 { if x < lo { lo } else { x } }'
    for f in $(seq 1 40); do echo "pub fn f$f(x: u64) -> u64 { x.wrapping_mul($f).wrapping_add($i) }"; done
    echo '#[cfg(test)] mod tests { #[test] fn renders() { assert_eq!(super::render(7), "7"); } }'
  } > "m$i/src/lib.rs"
  printf '#[test]\nfn words() { assert!(m%d::is_word("abc")); }\n' "$i" > "m$i/tests/words.rs"
done
echo "/target" > .gitignore
git add -A; git commit --quiet -m base
gen_base="$(git rev-parse HEAD)"
sed -i 's/pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 { if x < lo { lo } else { x } }/pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 { x.max(lo).min(hi) }/' m1/src/lib.rs
printf '#[test]\nfn clamps_high() { assert_eq!(m1::clamp(50, 0, 10), 10); }\n' > "m1/tests/clamp_${tag_ident}.rs"
acceptance
git add -A; git commit --quiet -m head

# ---- globset from its published sources --------------------------------------------------
gs="$work/globset"
gs_base=""
if [ "${#projects[@]}" -gt 1 ]; then
  # shellcheck source=bench/globset.sh
  . "$here/globset.sh"
  globset_repo "$gs" "$work" "$tag_ident"
fi

echo "==> warming cargo's registry cache (not timed)"
must env -C "$gen" cargo fetch --quiet
[ -z "$gs_base" ] || must env -C "$gs" cargo fetch --quiet

# measure NAME REPO BASE PACKAGE TEST_TARGET TEST_FILE: one round of the four measurements,
# appended to $work/times-NAME.
measure() {
  local name="$1" repo="$2" base="$3" pkg="$4" target="$5" file="$6"
  local out="$work/times-$name"
  cd "$repo"
  rm -rf "$work/$name-plain" "$work/$name-naive-base" "$work/$name-naive-head"
  local s e
  for mode in off require; do
    local label=cold
    [ "$mode" = off ] && label=cold-off
    rm -rf target
    echo "==> [$name] shipmoor claim-check, cold, --sandbox $mode"
    s=$(now)
    claim_check "$base" "$mode" "$work/$name-$label.json"
    e=$(now); echo "$label $s $e" >> "$out"
  done

  echo "==> [$name] plain cargo test of the bound test at head, cold target dir"
  must git clone --quiet "$repo" "$work/$name-plain"
  s=$(now)
  # At head the bound test passes: any failure is the benchmark's.
  must_log "$work/$name-plain.log" env -C "$work/$name-plain" CARGO_TARGET_DIR="$work/$name-plain-target" \
    cargo test --quiet -p "$pkg" --test "$target"
  e=$(now); echo "plain $s $e" >> "$out"

  echo "==> [$name] naive claim: cold build and run at base (+ head's test file), then at head"
  must git clone --quiet "$repo" "$work/$name-naive-base"
  must git clone --quiet "$repo" "$work/$name-naive-head"
  must git -C "$work/$name-naive-base" checkout --quiet "$base"
  must git -C "$work/$name-naive-base" checkout --quiet main -- "$file"
  s=$(now)
  # At base the bound test fails by design: it must fail as a test (exit 101, a failed test
  # result), not as a build.
  expect_test_failure "$work/$name-naive-base.log" env -C "$work/$name-naive-base" \
    CARGO_TARGET_DIR="$work/$name-naive-base-target" cargo test --quiet -p "$pkg" --test "$target"
  must_log "$work/$name-naive-head.log" env -C "$work/$name-naive-head" CARGO_TARGET_DIR="$work/$name-naive-head-target" \
    cargo test --quiet -p "$pkg" --test "$target"
  e=$(now); echo "naive $s $e" >> "$out"

  echo "==> [$name] the checkout's target/ built at head (as a cache restore leaves it; not timed)"
  must_log "$work/$name-warm-build.log" cargo test --no-run --quiet
  for mode in off require; do
    local label=warm
    [ "$mode" = off ] && label=warm-off
    echo "==> [$name] shipmoor claim-check, warm, --sandbox $mode"
    s=$(now)
    claim_check "$base" "$mode" "$work/$name-$label.json"
    e=$(now); echo "$label $s $e" >> "$out"
  done
  rm -rf target "$work/$name-plain-target" "$work/$name-naive-base-target" "$work/$name-naive-head-target"
}

# claim_check BASE MODE OUT: one claim-check of the change in the current directory, with
# --sandbox MODE, its JSON result in OUT, in a temporary directory of its own (made first:
# claim-check refuses one that does not exist, exit 2). Anything but the change's verdict,
# READY, stops the benchmark.
claim_check() {
  local base="$1" mode="$2" out="$3" tmpdir code=0
  tmpdir="$(mktemp -d "$work/tmp-XXXXXX")"
  "$bin" claim-check --base "$base" --format json --quiet --base-cache none \
    --sandbox "$mode" --temp-dir "$tmpdir" > "$out" || code=$?
  rm -rf "$tmpdir"
  echo "    exit $code"
  expect_verdict "$code" "$out" READY "\`$bin claim-check --base $base --sandbox $mode\` in $PWD"
}

for round in $(seq 1 "$rounds"); do
  echo "==> round $round of $rounds"
  measure generated "$gen" "$gen_base" m1 "clamp_${tag_ident}" "m1/tests/clamp_${tag_ident}.rs"
  [ -z "$gs_base" ] || measure globset "$gs" "$gs_base" globset "empty_${tag_ident}" "tests/empty_${tag_ident}.rs"
done

python3 - "$work" "$members" "$quick" "${projects[@]}" <<'PY'
import json, os, statistics, sys
work, members, quick, projects = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]

def times(name):
    """The median of each measurement over the rounds."""
    t = {}
    for line in open(os.path.join(work, f"times-{name}")):
        k, s, e = line.split()
        t.setdefault(k, []).append(float(e) - float(s))
    return {k: statistics.median(v) for k, v in t.items()}, {k: v[-1] for k, v in t.items()}, len(t["cold"])

def runtime(name, kind):
    return json.load(open(os.path.join(work, f"{name}-{kind}.json")))["result"]

labels = {
    "generated": f"generated workspace ({members} crates{', no deps' if quick else ''})",
    "globset": "globset 0.4.22 (published sources)",
}
q = "QUICK (debug build, not figures): " if quick else ""
rows = []
for name in projects:
    label = labels[name]
    t, last, n = times(name)
    print()
    for kind in ("cold", "warm", "cold-off", "warm-off"):
        r = runtime(name, kind)
        commands = sum(x["seconds"] for x in r["runtime"])
        print(f"[{name}, {kind}, last round] verdict {r['verdict']}; engine overhead {last[kind] - commands:.2f} s of {last[kind]:.2f} s")
        for x in r["runtime"]:
            print(f"  {x['side']:<26} {x['seconds']:>6.1f}s  {x['result'][:60]:<60} {x['command'][:60]}")
    rows.append((label, t))

print()
print(f"{q}the sandbox's cost, medians of {n} round(s) (sandboxed / --sandbox off):")
print(f"{'project':<38} {'cold':>8} {'cold off':>9} {'ratio':>6} {'warm':>8} {'warm off':>9} {'ratio':>6}")
for label, t in rows:
    print(f"{label:<38} {t['cold']:>7.2f}s {t['cold-off']:>8.2f}s {t['cold'] / t['cold-off']:>6.3f} {t['warm']:>7.2f}s {t['warm-off']:>8.2f}s {t['warm'] / t['warm-off']:>6.3f}")
print("target: sandboxed / off <= 1.03")
print()
print(f"{q}medians of {n} round(s):")
print(f"{'project':<38} {'claim-check':>11} {'plain':>8} {'naive':>8} {'cc/plain':>9} {'naive/plain':>12} {'warm cc':>8} {'warm/cold':>10}")
for label, t in rows:
    print(f"{label:<38} {t['cold']:>10.2f}s {t['plain']:>7.2f}s {t['naive']:>7.2f}s {t['cold'] / t['plain']:>9.2f} {t['naive'] / t['plain']:>12.2f} {t['warm']:>7.2f}s {t['warm'] / t['cold']:>10.2f}")
print()
print("targets: claim-check / plain <= 1.2; warm / cold claim-check <= 0.5")
PY
quick_note
