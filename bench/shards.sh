#!/usr/bin/env bash
# Benchmark of the sharded floor: what spreading the floor over parallel jobs buys, and what the
# fuse step costs. From one run of this script:
#
# 1. A pytest project of CRITERIA criteria, each bound to a test of its own that sleeps SLEEP
#    seconds (so a 2-core machine shows the effect truthfully: the floor waits, it does not
#    compute), failing at base and passing at head. Timed, wall clock:
#    - the single run (`claim-check`, no shards): the baseline;
#    - 1, 2 and 4 shards (`claim-check --shard K/N`), each on a clone of its own, started
#      together as parallel processes, then `shipmoor fuse` of their directories;
#    each printed with its speed-up against the single run. The fused fix packet, verify.md
#    and attestation are compared with the single run's (byte for byte, the clock pinned).
# 2. The fuse step alone for 200 criteria (bound to `check.command` checks, cheap to run, in 4
#    shards): the median of FUSES fuse runs, against the target of 200 ms (the script exits 1
#    when it is missed).
#
# The single run and every fuse must reach the change's verdict, READY, and every shard must
# write its result (exit 0); any other exit (2 input error, 3 crash, or a verdict the change
# does not have) stops the script with a message naming the command.
#
#   bash bench/shards.sh [SLEEP [CRITERIA [FUSES]]]   # defaults: 2 s, 8 criteria, 5 fuses
#   SHIPMOOR_BIN=target/debug/shipmoor bash bench/shards.sh   # skip the release build
#   QUICK=1 bash bench/shards.sh   # quick mode (bench/common.sh): 1 s, 2 criteria, 1 fuse,
#                                  # 2 shards, the fuse step over 20 criteria, the debug build;
#                                  # not figures, and the 200 ms target is not enforced
#
# Needs: cargo, git, python3 with pytest. No network.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
sleep_s="${1:-$(quick_or 2 1)}"
criteria="${2:-$(quick_or 8 2)}"
fuses="${3:-$(quick_or 5 1)}"
for v in "$sleep_s" "$criteria" "$fuses"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench/shards.sh: arguments are positive integers, not '$v'" >&2; exit 2; }
done
if is_quick; then shard_counts=(2); wide=20; else shard_counts=(1 2 4); wide=200; fi
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-bench-shards-XXXXXX")"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
export SOURCE_DATE_EPOCH=1700000000

shipmoor_bin
bench_resource_uri
python="$(python3 -c 'import sys; print(sys.executable)')"
"$python" -m pytest --version >/dev/null 2>&1 || die "pytest is not installed for $python: pip install pytest"

ident() {
  "$python" -c 'import hashlib,sys; i=sys.argv[1]; print(("AC-"+i.upper()+"-"+hashlib.sha256(b"claim-check/tag/v1\0"+i.encode()).hexdigest()[:4]).lower().replace("-","_"))' "$1"
}
now() { date +%s.%N; }
elapsed() { "$python" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

# A repository with base on main and the change on `feature`; $1: its directory, $2: the
# criteria's kind (pytest: sleeping tests; command: check.command over marker files).
make_repo() {
  local repo="$1" kind="$2" n="$3"
  mkdir -p "$repo/svc" "$repo/tests" "$repo/.shipmoor" "$repo/checks"
  cd "$repo"
  git init --quiet --initial-branch=main
  git config user.name bench; git config user.email bench@example.com
  printf '[pytest]\ntestpaths = tests\n' > pytest.ini
  : > svc/__init__.py
  printf 'VALUE = 1\n' > svc/m.py
  printf '.shipmoor/claim-check.*\n.shipmoor/verify.md\n.shipmoor/evidence/\n__pycache__/\n.pytest_cache/\n' > .gitignore
  git add -A && git commit --quiet -m base
  git switch --quiet -c feature
  # The change claims its criteria: the acceptance file is new at head.
  {
    echo "version: 1"
    echo "criteria:"
    for i in $(seq 1 "$n"); do
      echo "  - id: c$i"
      echo "    ac: Criterion $i holds."
      if [ "$kind" = command ]; then
        echo "    check:"
        echo "      command: test -f checks/c$i.done"
      fi
    done
  } > .shipmoor/acceptance.yaml
  printf 'VALUE = 2\n' > svc/m.py
  for i in $(seq 1 "$n"); do
    if [ "$kind" = command ]; then
      : > "checks/c$i.done"
    else
      printf 'import time\nfrom svc import m\n\n\ndef test_c%s():\n    time.sleep(%s)\n    assert m.VALUE == 2\n' \
        "$i" "$sleep_s" > "tests/test_c${i}_$(ident "c$i").py"
    fi
  done
  git add -A && git commit --quiet -m head
  cd - >/dev/null
}

# Shards 1..$2 of the repository $1, each on a clone of its own, in parallel; then the fuse in
# the first clone. Prints the wall time.
sharded() {
  local repo="$1" n="$2" out="$3" k pids=()
  rm -rf "$out"; mkdir -p "$out"
  for k in $(seq 1 "$n"); do
    must git clone --quiet --branch feature "$repo" "$out/clone-$k"
  done
  local t0; t0="$(now)"
  for k in $(seq 1 "$n"); do
    (cd "$out/clone-$k" && "$bin" claim-check --base origin/main --head HEAD --quiet \
      --shard "$k/$n" --shard-out "$out/shard-$k" >"$out/shard-$k.log" 2>&1) &
    pids+=("$!")
  done
  # A shard exits 0 once its result is written; anything else is the benchmark's failure.
  for k in $(seq 1 "$n"); do
    local code=0
    wait "${pids[$((k - 1))]}" || code=$?
    if [ "$code" != 0 ]; then
      show_log "$out/shard-$k.log"
      die "\`$bin claim-check --base origin/main --head HEAD --shard $k/$n\` in $out/clone-$k failed (exit $code)"
    fi
  done
  local dirs=()
  for k in $(seq 1 "$n"); do dirs+=("$out/shard-$k"); done
  local code=0
  (cd "$out/clone-1" && "$bin" fuse --quiet --format json "${dirs[@]}" >"$out/fuse.json" 2>"$out/fuse.log") || code=$?
  local t1; t1="$(now)"
  expect_verdict "$code" "$out/fuse.json" READY "\`$bin fuse\` of $n shard(s) in $out/clone-1"
  elapsed "$t0" "$t1"
}

same_outputs() {
  local a="$1" b="$2" f
  for f in .shipmoor/claim-check.fixes.json .shipmoor/verify.md .shipmoor/claim-check.vsa.json; do
    cmp -s "$a/$f" "$b/$f" || { echo "differ: $f"; return; }
  done
  echo "byte-identical"
}

is_quick && echo "QUICK MODE (debug build, not figures)"
echo "==> 1. $criteria criteria, each bound to a test sleeping ${sleep_s} s (the floor runs it at base and at head)"
make_repo "$work/sleepy" pytest "$criteria"
must git clone --quiet --branch feature "$work/sleepy" "$work/single"
t0="$(now)"
code=0
(cd "$work/single" && "$bin" claim-check --base origin/main --head HEAD --quiet --format json >"$work/single.json" 2>"$work/single.log") || code=$?
single="$(elapsed "$t0" "$(now)")"
expect_verdict "$code" "$work/single.json" READY "\`$bin claim-check --base origin/main --head HEAD\` in $work/single"
printf '  %-26s %8s s\n' "single run (baseline)" "$single"
for n in "${shard_counts[@]}"; do
  t="$(sharded "$work/sleepy" "$n" "$work/sharded-$n")"
  speedup="$("$python" -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$single" "$t")"
  printf '  %-26s %8s s   %sx the single run   fused outputs: %s\n' "$n shard(s) + fuse" "$t" "$speedup" \
    "$(same_outputs "$work/single" "$work/sharded-$n/clone-1")"
done

echo
echo "==> 2. the fuse step for $wide criteria (check.command checks, 4 shards), median of $fuses"
make_repo "$work/wide" command "$wide"
sharded "$work/wide" 4 "$work/wide-4" >/dev/null
dirs=()
for k in 1 2 3 4; do dirs+=("$work/wide-4/shard-$k"); done
times=()
for _ in $(seq 1 "$fuses"); do
  t0="$(now)"
  code=0
  (cd "$work/wide-4/clone-1" && "$bin" fuse --quiet --format json "${dirs[@]}" >"$work/fuse.json" 2>"$work/fuse.log") || code=$?
  times+=("$(elapsed "$t0" "$(now)")")
  expect_verdict "$code" "$work/fuse.json" READY "\`$bin fuse\` of 4 shards of $wide criteria in $work/wide-4/clone-1"
done
if ! "$python" - "$wide" "$quick" "${times[@]}" <<'PY'
import statistics, sys
wide, quick, times = sys.argv[1], sys.argv[2] == "1", [float(t) for t in sys.argv[3:]]
median = statistics.median(times) * 1000
if quick:
    print(f"  QUICK: fuse of 4 shards, {wide} criteria: median {median:.0f} ms over {len(times)} runs "
          f"(debug build: not a figure; the 200 ms target is for 200 criteria, release build)")
    sys.exit(0)
print(f"  fuse of 4 shards, {wide} criteria: median {median:.0f} ms over {len(times)} runs "
      f"(target under 200 ms: {'met' if median < 200 else 'MISSED'})")
sys.exit(0 if median < 200 else 1)
PY
then
  die "the fuse step missed its target of 200 ms (above)"
fi
quick_note
