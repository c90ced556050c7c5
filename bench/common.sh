# shellcheck shell=bash
# Sourced by every script in bench/ right after `set -euo pipefail`: quick mode, the shipmoor
# binary, and the helpers that stop a benchmark, with a message on stderr naming the command,
# as soon as a command it runs or times fails. A broken benchmark never prints a ratio.
#
# QUICK=1 in the environment: quick mode. One round, the smallest project (a generated one, no
# downloaded crates), a few iterations, and the debug build: SHIPMOOR_BIN defaults to
# target/debug/shipmoor (built with `cargo build` when missing) and the in-process benches
# (benches/*.rs) build with `cargo bench --profile dev`, on the test build's dependencies.
# Targets are shown, not enforced. Quick mode checks that a benchmark runs and that every
# command in it succeeds; its ratios are marked quick and are not figures. Arguments and
# variables given explicitly still win over quick mode's defaults.

bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench_name="bench/$(basename "$0")"

# die MESSAGE: stops the benchmark with MESSAGE on stderr.
die() {
  echo "$bench_name: $*" >&2
  exit 1
}

case "${QUICK:-0}" in
  0 | "") quick=0 ;;
  1) quick=1 ;;
  *) die "QUICK is 1 (quick mode) or 0, not '${QUICK}'" ;;
esac
is_quick() { [ "$quick" = 1 ]; }

# quick_or NORMAL QUICK: the default for this mode.
quick_or() { if is_quick; then echo "$2"; else echo "$1"; fi; }

# The repositories a benchmark makes have no remote, or a local one: the statement's
# `resourceUri` must still name where head is fetched from (claim-check exits 2 without it).
bench_resource_uri() {
  SHIPMOOR_RESOURCE_URI="https://git.example.com/shipmoor-bench/$(basename "$0" .sh)"
  export SHIPMOOR_RESOURCE_URI
}

# The in-process benches' cargo profile: the bench profile (release), or dev in quick mode.
# shellcheck disable=SC2034 # used by the scripts that source this file
if is_quick; then bench_profile=(--profile dev); else bench_profile=(); fi

# quick_note: a line under a quick run's results saying they are not figures.
quick_note() {
  if is_quick; then
    echo
    echo "QUICK MODE (debug build, one round, smallest project, few iterations): the ratios above"
    echo "show that the benchmark runs; they are not figures and no target is enforced."
  fi
}

# The cargo target directory of this repository (CARGO_TARGET_DIR and cargo's config included).
bench_target_dir() {
  cargo metadata --format-version 1 --no-deps --manifest-path "$bench_root/Cargo.toml" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' ||
    die "\`cargo metadata\` of $bench_root failed"
}

# shipmoor_bin: sets `bin`, the shipmoor under test, as an absolute path: SHIPMOOR_BIN when set;
# in quick mode target/debug/shipmoor (built when missing); else a release build.
shipmoor_bin() {
  if [ -n "${SHIPMOOR_BIN:-}" ]; then
    if [ ! -f "$SHIPMOOR_BIN" ] || [ ! -x "$SHIPMOOR_BIN" ]; then
      die "SHIPMOOR_BIN=$SHIPMOOR_BIN is not an executable file"
    fi
    bin="$(cd "$(dirname "$SHIPMOOR_BIN")" && pwd)/$(basename "$SHIPMOOR_BIN")"
  elif is_quick; then
    bin="$(bench_target_dir)/debug/shipmoor"
    if [ ! -x "$bin" ]; then
      echo "==> building shipmoor (debug, quick mode)"
      cargo build --quiet --manifest-path "$bench_root/Cargo.toml" ||
        die "\`cargo build --manifest-path $bench_root/Cargo.toml\` failed"
    fi
    [ -x "$bin" ] || die "no debug binary at $bin after \`cargo build\`"
  else
    echo "==> building shipmoor (release)"
    cargo build --release --quiet --manifest-path "$bench_root/Cargo.toml" ||
      die "\`cargo build --release --manifest-path $bench_root/Cargo.toml\` failed"
    bin="$(bench_target_dir)/release/shipmoor"
    [ -x "$bin" ] || die "no release binary at $bin after \`cargo build --release\`"
  fi
  echo "    shipmoor: $bin$(is_quick && echo ' (quick mode)')"
}

# show_log LOG: the last lines of a command's output, on stderr.
show_log() {
  [ -s "$1" ] && tail -n 40 "$1" | sed 's/^/    | /' >&2
  return 0
}

# must CMD...: runs CMD; when it fails, stops the benchmark naming it and its exit code.
must() {
  local code=0
  "$@" || code=$?
  [ "$code" = 0 ] || die "\`$*\` failed (exit $code)"
}

# must_log LOG CMD...: the same, with CMD's stdout and stderr in LOG, whose end is shown when it
# fails.
must_log() {
  local log="$1" code=0
  shift
  "$@" >"$log" 2>&1 || code=$?
  if [ "$code" != 0 ]; then
    show_log "$log"
    die "\`$*\` failed (exit $code)"
  fi
}

# expect_test_failure LOG CMD...: CMD is a `cargo test` whose test fails by design (the bound
# test at base). It must fail as a test fails: cargo's exit 101 with a failed test result in its
# output (in LOG), not a build error or any other exit.
expect_test_failure() {
  local log="$1" code=0
  shift
  "$@" >"$log" 2>&1 || code=$?
  if [ "$code" = 101 ] && grep -q '^test result: FAILED' "$log" && ! grep -q '^error: could not compile' "$log"; then
    return 0
  fi
  show_log "$log"
  if [ "$code" = 0 ]; then
    die "\`$*\` passed, but its test fails by design here (a broken benchmark setup)"
  fi
  die "\`$*\` failed other than by its test failing (exit $code; a test failure is exit 101 with 'test result: FAILED')"
}

# expect_verdict CODE JSON WANT WHAT: a claim-check (or fuse) that exited CODE with its JSON
# result (claim_check.run.v1) in JSON must have reached the verdict WANT. Exit 2 (usage or input
# error), 3 (crash) or any code that is not a verdict's stops the benchmark, naming WHAT.
expect_verdict() {
  local code="$1" json="$2" want="$3" what="$4" got want_code
  case "$code" in
    0 | 1 | 4) ;;
    2) show_log "$json"; die "$what: usage or input error (exit 2), no verdict" ;;
    3) show_log "$json"; die "$what: engine crash (exit 3), no verdict" ;;
    *) show_log "$json"; die "$what: exit $code, which is no verdict's" ;;
  esac
  got="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["verdict"])' "$json" 2>/dev/null)" ||
    { show_log "$json"; die "$what: exit $code, but its output holds no claim-check result"; }
  case "$got" in
    READY | "READY WITH GAPS") want_code=0 ;;
    BLOCKED) want_code=1 ;;
    *) want_code=4 ;;
  esac
  [ "$code" = "$want_code" ] || die "$what: verdict $got but exit $code (expected $want_code for it)"
  [ "$got" = "$want" ] || die "$what: verdict $got (exit $code); this benchmark's change is $want"
}

# bench_exe NAME DIR: builds benches/NAME.rs (cargo's bench profile, or dev in quick mode; its
# build log in DIR) and prints the path of its executable. The script runs that executable
# itself (bench_run), so that its own exit code is seen, not cargo's.
bench_exe() {
  local name="$1" dir="$2" exe
  cargo bench --quiet --no-run "${bench_profile[@]}" --bench "$name" --message-format=json \
    --manifest-path "$bench_root/Cargo.toml" >"$dir/bench-$name.build.json" 2>"$dir/bench-$name.build.log" ||
    { show_log "$dir/bench-$name.build.log"; die "\`cargo bench --no-run ${bench_profile[*]} --bench $name\` failed"; }
  exe="$(python3 - "$name" "$dir/bench-$name.build.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
for line in open(path):
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == name and m.get("executable"):
        print(m["executable"])
PY
)" || die "cannot read the build of benches/$name.rs from cargo's messages"
  if [ -z "$exe" ] || [ ! -x "$exe" ]; then
    die "cargo built no executable for benches/$name.rs"
  fi
  echo "$exe"
}

# bench_run LOG MISSED EXE ARGS...: runs an in-process bench executable from the repository's
# root (as `cargo bench` does), its output shown and kept in LOG. Exit 0 passes. Exit 1 with
# the line MISSED in its output is the bench's own verdict that a target was missed: it stops
# the benchmark, except in quick mode (a debug build), where it is noted. Anything else (an
# argument error, a panic) stops the benchmark. MISSED empty: the bench has no target.
bench_run() {
  local log="$1" missed="$2" code=0
  shift 2
  (cd "$bench_root" && "$@" --bench) 2>&1 | tee "$log" || code=$?
  [ "$code" = 0 ] && return 0
  if [ "$code" = 1 ] && [ -n "$missed" ] && grep -q "$missed" "$log"; then
    if is_quick; then
      echo "    (quick mode: a debug build misses the target; not enforced)"
      return 0
    fi
    die "\`$(basename "$1") ${*:2}\` missed its target (above)"
  fi
  die "\`$* --bench\` failed (exit $code)"
}
