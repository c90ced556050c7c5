#!/usr/bin/env bash
# Runs every benchmark in bench/ once in quick mode (QUICK=1, see bench/common.sh: one round,
# the smallest project, a few iterations, the debug build), prints each one's time, and exits 1
# naming the first that failed (its output's end is shown). Quick mode checks that the
# benchmarks run and that every command they time succeeds; the ratios they print are not
# figures (run a benchmark without QUICK for those).
#
#   bash bench/quick.sh                 # every benchmark
#   bash bench/quick.sh floor cache     # only these (names of bench/NAME.sh)
#   bash bench/quick.sh --self-test     # checks that a benchmark whose timed command fails
#                                       # stops: floor.sh and floor-pytest.sh with a shipmoor
#                                       # that exits 3 (a crash), cache.sh with one that exits
#                                       # 0 and prints nothing; each must exit non-zero and name
#                                       # the command on stderr
#
# The debug binary is brought up to date first (`cargo build`), and every benchmark uses it
# (SHIPMOOR_BIN, unless given). Each benchmark's output is kept in a log, removed when all pass.
# Needs what the benchmarks need (see each one's header): cargo, git, python3 with pytest and
# pip, openssl, Node.js 20+ and npm, docker-registry, skopeo, ripgrep, bc; the package registries
# the first time (pip, npm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"

all=(admit cache derive floor-pytest floor judge mcp replay scan shards)
logs="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-bench-quick-XXXXXX")"
keep_logs=""
trap '[ -n "$keep_logs" ] || rm -rf "$logs"' EXIT
export QUICK=1
# Quick mode's own defaults, not a caller's.
unset ROUNDS

now() { date +%s.%N; }
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }

# The self-test: a benchmark whose timed command fails must stop, non-zero, naming it.
self_test() {
  local fake="$logs/fake" failed=0
  mkdir -p "$fake"
  printf '#!/bin/sh\necho "fake shipmoor: a crash (exit 3)" >&2\nexit 3\n' >"$fake/crash"
  printf '#!/bin/sh\nexit 0\n' >"$fake/silent"
  chmod +x "$fake/crash" "$fake/silent"
  local name kind log code t0
  for pair in floor:crash floor-pytest:crash cache:silent; do
    name="${pair%%:*}"
    kind="${pair#*:}"
    log="$logs/self-test-$name-$kind"
    code=0
    t0="$(now)"
    SHIPMOOR_BIN="$fake/$kind" bash "$here/$name.sh" >"$log.out" 2>"$log.err" </dev/null || code=$?
    if [ "$code" = 0 ]; then
      echo "self-test: bench/$name.sh with a shipmoor that $([ "$kind" = crash ] && echo 'exits 3' || echo 'exits 0 and prints nothing') exited 0: FAILED" >&2
      failed=1
    elif ! grep -q "^bench/$name.sh: .*$fake/$kind" "$log.err"; then
      echo "self-test: bench/$name.sh exited $code, but its stderr does not name the command ($fake/$kind): FAILED" >&2
      tail -n 20 "$log.err" | sed 's/^/    | /' >&2
      failed=1
    else
      printf 'self-test: %-24s stops on a shipmoor that %-28s exit %s in %5s s: %s\n' "bench/$name.sh" \
        "$([ "$kind" = crash ] && echo 'exits 3:' || echo 'exits 0 with no result:')" "$code" "$(secs "$t0" "$(now)")" \
        "$(grep -m1 "^bench/$name.sh: " "$log.err" | cut -c1-120)"
    fi
  done
  if [ "$failed" != 0 ]; then
    keep_logs=1
    die "the self-test failed: a benchmark whose timed command fails did not stop (logs in $logs)"
  fi
  echo "self-test: passed"
}

if [ "${1:-}" = --self-test ]; then
  [ $# = 1 ] || die "--self-test takes no other argument"
  self_test
  exit 0
fi

benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=("${all[@]}")
for name in "${benches[@]}"; do
  case " ${all[*]} " in
    *" $name "*) ;;
    *) die "no benchmark bench/$name.sh (the benchmarks: ${all[*]})" ;;
  esac
done

if [ -z "${SHIPMOOR_BIN:-}" ]; then
  echo "==> cargo build (the debug binary the benchmarks run)"
  cargo build --quiet --manifest-path "$bench_root/Cargo.toml" ||
    die "\`cargo build --manifest-path $bench_root/Cargo.toml\` failed"
  SHIPMOOR_BIN="$(bench_target_dir)/debug/shipmoor"
fi
export SHIPMOOR_BIN

first_failed=""
failed=()
total0="$(now)"
for name in "${benches[@]}"; do
  code=0
  t0="$(now)"
  bash "$here/$name.sh" >"$logs/$name.log" 2>&1 </dev/null || code=$?
  t="$(secs "$t0" "$(now)")"
  if [ "$code" = 0 ]; then
    printf '%-28s %6s s  ok\n' "bench/$name.sh" "$t"
  else
    printf '%-28s %6s s  FAILED (exit %s)\n' "bench/$name.sh" "$t" "$code"
    tail -n 40 "$logs/$name.log" | sed 's/^/    | /'
    failed+=("$name")
    [ -n "$first_failed" ] || first_failed="$name"
  fi
done
printf '%-28s %6s s\n' "all (quick mode)" "$(secs "$total0" "$(now)")"

if [ -n "$first_failed" ]; then
  keep_logs=1
  die "bench/$first_failed.sh failed in quick mode (failed: ${failed[*]}; logs in $logs)"
fi
