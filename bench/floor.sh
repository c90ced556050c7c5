#!/usr/bin/env bash
# Benchmark of the floor on a generated cargo workspace: prints the engine's overhead (total
# time minus the time of the commands it ran) and the ratio of claim-check's total time to one
# plain `cargo test` of the bound tests at head (cold, as a fresh CI job would run it), both
# measured here, in the same script.
#
#   bash bench/floor.sh [MEMBERS]     # MEMBERS: workspace crates to generate (default 6)
#
# The workspace depends on `itoa` and `regex` from crates.io, so the registry must be reachable
# (the first run downloads them into cargo's cache).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
members="${1:-6}"
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "==> building shipmoor (release)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/shipmoor"
tag="$(python3 -c 'import hashlib;print("AC-CLAMP-HIGH-"+hashlib.sha256(b"claim-check/tag/v1\0clamp-high").hexdigest()[:4])')"
tag_ident="$(echo "$tag" | tr 'A-Z-' 'a-z_')"

repo="$work/repo"
mkdir -p "$repo"
cd "$repo"
git init --quiet --initial-branch=main
git config user.name bench; git config user.email bench@example.com
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
git add -A; git commit --quiet -m base
base="$(git rev-parse HEAD)"
sed -i 's/pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 { if x < lo { lo } else { x } }/pub fn clamp(x: i64, lo: i64, hi: i64) -> i64 { x.max(lo).min(hi) }/' m1/src/lib.rs
printf '#[test]\nfn clamps_high() { assert_eq!(m1::clamp(50, 0, 10), 10); }\n' > "m1/tests/clamp_${tag_ident}.rs"
mkdir -p .shipmoor
printf 'version: 1\ncriteria:\n  - id: clamp-high\n    ac: Values above the range are clamped to its top.\n' > .shipmoor/acceptance.yaml
echo "/target" > .gitignore
git add -A; git commit --quiet -m head

echo "==> warming cargo's registry cache (not timed)"
cargo fetch --quiet

echo "==> shipmoor claim-check (workspace of $members crates)"
start=$(date +%s.%N)
set +e
"$bin" claim-check --base "$base" --format json --quiet --temp-dir "$work/tmp" > "$work/result.json"
code=$?
set -e
end=$(date +%s.%N)
echo "    exit $code"

echo "==> plain cargo test of the bound test at head, cold target dir"
git clone --quiet "$repo" "$work/plain"
pstart=$(date +%s.%N)
(cd "$work/plain" && CARGO_TARGET_DIR="$work/plain-target" cargo test --quiet -p m1 --test "clamp_${tag_ident}" >/dev/null 2>&1)
pend=$(date +%s.%N)

python3 - "$work/result.json" "$start" "$end" "$pstart" "$pend" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))["result"]
total = float(sys.argv[3]) - float(sys.argv[2])
plain = float(sys.argv[5]) - float(sys.argv[4])
commands = sum(r["seconds"] for r in result["runtime"])
print()
print(f"verdict: {result['verdict']}")
for r in result["runtime"]:
    print(f"  {r['side']:<26} {r['seconds']:>6.1f}s  {r['result']:<40} {r['command'][:70]}")
print()
print(f"claim-check total:                      {total:7.2f} s")
print(f"  commands it ran (builds, tests):      {commands:7.2f} s")
print(f"  engine overhead (total - commands):   {total - commands:7.2f} s  ({100 * (total - commands) / total:.1f}% of total)")
print(f"plain cargo test of the bound test:     {plain:7.2f} s  (cold, at head)")
print(f"ratio claim-check / plain cargo test:   {total / plain:7.2f}")
PY
