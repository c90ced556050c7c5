#!/usr/bin/env bash
# Benchmark of the floor on two cargo projects, measured side by side in one run:
#
#   claim-check   `shipmoor claim-check` of the change, cold (no target dir anywhere);
#   plain         one plain `cargo test` of the bound test at head, cold (what a CI job runs);
#   naive         the naive claim: two cold builds and runs of the bound test, one at base with
#                 head's test file laid over it, one at head;
#   warm          claim-check again with the checkout's own `target/` already built (as after
#                 a cache restore or an earlier `cargo test` step), beside the cold claim-check;
#   cold-off, warm-off   the same two runs with `--sandbox off`: every claim-check run above is
#                 sandboxed (`--sandbox require`), so these give the sandbox's own cost.
#
# and the ratios claim-check / plain, naive / plain (the target is claim-check ≤ 1.2 × plain),
# warm / cold claim-check (the target is ≤ 0.5), and sandboxed / off, cold and warm (the target
# is ≤ 1.03). Also each run's runtime rows and the engine's overhead (total time minus the time
# of the commands it ran). A claim-check that ends in no verdict (an exit other than 0, 1 or
# 4) stops the script with its exit code: a broken benchmark never prints a ratio.
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
#
# On a shared machine the load changes between measurements taken minutes apart: several
# interleaved rounds and their medians give steadier ratios than one round.
#
# crates.io must be reachable (the first run downloads the crates into cargo's cache; the
# downloads are not timed). Nothing here asserts a time: it prints what it measured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
members="${1:-6}"
rounds="${ROUNDS:-1}"
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
unset CARGO_TARGET_DIR

if [ -n "${SHIPMOOR_BIN:-}" ]; then
  bin="$(cd "$(dirname "$SHIPMOOR_BIN")" && pwd)/$(basename "$SHIPMOOR_BIN")"
else
  echo "==> building shipmoor (release)"
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  bin="$root/target/release/shipmoor"
fi
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
itoa = "1"
regex = "1"
TOML
  {
    echo 'pub fn render(n: u64) -> String { itoa::Buffer::new().format(n).to_string() }'
    echo 'pub fn is_word(s: &str) -> bool { regex::Regex::new(r"^\w+$").unwrap().is_match(s) }'
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
. "$here/globset.sh"
gs="$work/globset"
globset_repo "$gs" "$work" "$tag_ident"

echo "==> warming cargo's registry cache (not timed)"
(cd "$gen" && cargo fetch --quiet)
(cd "$gs" && cargo fetch --quiet)

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
  git clone --quiet "$repo" "$work/$name-plain"
  s=$(now)
  (cd "$work/$name-plain" && CARGO_TARGET_DIR="$work/$name-plain-target" cargo test --quiet -p "$pkg" --test "$target" >/dev/null 2>&1) || true
  e=$(now); echo "plain $s $e" >> "$out"

  echo "==> [$name] naive claim: cold build and run at base (+ head's test file), then at head"
  git clone --quiet "$repo" "$work/$name-naive-base"
  git clone --quiet "$repo" "$work/$name-naive-head"
  git -C "$work/$name-naive-base" checkout --quiet "$base"
  git -C "$work/$name-naive-base" checkout --quiet main -- "$file"
  s=$(now)
  (cd "$work/$name-naive-base" && CARGO_TARGET_DIR="$work/$name-naive-base-target" cargo test --quiet -p "$pkg" --test "$target" >/dev/null 2>&1) || true
  (cd "$work/$name-naive-head" && CARGO_TARGET_DIR="$work/$name-naive-head-target" cargo test --quiet -p "$pkg" --test "$target" >/dev/null 2>&1) || true
  e=$(now); echo "naive $s $e" >> "$out"

  echo "==> [$name] the checkout's target/ built at head (as a cache restore leaves it; not timed)"
  cargo test --no-run --quiet >/dev/null 2>&1 || true
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
# claim-check refuses one that does not exist). Anything but a verdict stops the benchmark.
claim_check() {
  local base="$1" mode="$2" out="$3" tmpdir code
  tmpdir="$(mktemp -d "$work/tmp-XXXXXX")"
  set +e
  "$bin" claim-check --base "$base" --format json --quiet --base-cache none \
    --sandbox "$mode" --temp-dir "$tmpdir" > "$out"
  code=$?
  set -e
  rm -rf "$tmpdir"
  echo "    exit $code"
  case "$code" in
    0|1|4) ;;
    *) echo "bench/floor.sh: claim-check --sandbox $mode ended without a verdict (exit $code); see $out" >&2
       exit "$code" ;;
  esac
}

for round in $(seq 1 "$rounds"); do
  echo "==> round $round of $rounds"
  measure generated "$gen" "$gen_base" m1 "clamp_${tag_ident}" "m1/tests/clamp_${tag_ident}.rs"
  measure globset "$gs" "$gs_base" globset "empty_${tag_ident}" "tests/empty_${tag_ident}.rs"
done

python3 - "$work" "$members" <<'PY'
import json, os, statistics, sys
work, members = sys.argv[1], sys.argv[2]

def times(name):
    """The median of each measurement over the rounds."""
    t = {}
    for line in open(os.path.join(work, f"times-{name}")):
        k, s, e = line.split()
        t.setdefault(k, []).append(float(e) - float(s))
    return {k: statistics.median(v) for k, v in t.items()}, {k: v[-1] for k, v in t.items()}, len(t["cold"])

def runtime(name, kind):
    return json.load(open(os.path.join(work, f"{name}-{kind}.json")))["result"]

rows = []
for name, label in [("generated", f"generated workspace ({members} crates)"), ("globset", "globset 0.4.22 (published sources)")]:
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
print(f"the sandbox's cost, medians of {n} round(s) (sandboxed / --sandbox off):")
print(f"{'project':<38} {'cold':>8} {'cold off':>9} {'ratio':>6} {'warm':>8} {'warm off':>9} {'ratio':>6}")
for label, t in rows:
    print(f"{label:<38} {t['cold']:>7.2f}s {t['cold-off']:>8.2f}s {t['cold'] / t['cold-off']:>6.3f} {t['warm']:>7.2f}s {t['warm-off']:>8.2f}s {t['warm'] / t['warm-off']:>6.3f}")
print("target: sandboxed / off <= 1.03")
print()
print(f"medians of {n} round(s):")
print(f"{'project':<38} {'claim-check':>11} {'plain':>8} {'naive':>8} {'cc/plain':>9} {'naive/plain':>12} {'warm cc':>8} {'warm/cold':>10}")
for label, t in rows:
    print(f"{label:<38} {t['cold']:>10.2f}s {t['plain']:>7.2f}s {t['naive']:>7.2f}s {t['cold'] / t['plain']:>9.2f} {t['naive'] / t['plain']:>12.2f} {t['warm']:>7.2f}s {t['warm'] / t['cold']:>10.2f}")
print()
print("targets: claim-check / plain <= 1.2; warm / cold claim-check <= 0.5")
PY
