#!/usr/bin/env bash
# Benchmark of the base cache: a pull request of three pushes, measured in one run of this
# script, on two projects:
#
#   sleepy    a pytest project whose tagged test spends 2 s at each side (it fails at base,
#             passes at head);
#   globset   the published sources of `globset` 0.4.22 (cargo downloads them into its
#             registry cache), committed with a bug at base, its fix and a tagged integration
#             test at head.
#
# Push 1 runs base and head (and keeps base's results in the cache); pushes 2 and 3 change
# only code, so they reuse base. Also push 2 again with `--base-cache none`, the same work as
# push 1, as the baseline measured beside it. Printed: each run's wall time, push 2 / push 1
# and push 3 / push 1 (the target: at most 0.6), and the cache's own cost on each hit as the
# run reports it in its `base cache` runtime row (reading the cache, the key with the
# toolchain's answers, the entry's items re-hashed; the target: under 50 ms).
#
# Every run must reach the change's verdict, READY (exit 0); any other verdict, an exit of 2
# (input error, such as a --temp-dir that does not exist) or 3 (crash) stops the script with a
# message naming the command.
#
#   bash bench/cache.sh
#   SHIPMOOR_BIN=target/debug/shipmoor bash bench/cache.sh   # skip the release build
#   ROUNDS=3 bash bench/cache.sh                             # medians of interleaved rounds
#   QUICK=1 bash bench/cache.sh    # quick mode (bench/common.sh): one round, the pytest project
#                                  # only, its test sleeping 1 s, the debug build; not figures
#
# Needs cargo, git, python3 with pytest. crates.io must be reachable the first time (the
# download is not timed), except in quick mode. Nothing here asserts a time: it prints what it
# measured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
rounds="${ROUNDS:-1}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
# The projects: quick mode leaves out globset (a crate downloaded from crates.io).
if is_quick; then projects=(sleepy); sleep_s=1; else projects=(sleepy globset); sleep_s=2; fi
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-cache-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

python3 -m pytest --version >/dev/null 2>&1 || must python3 -m pip install --quiet pytest
shipmoor_bin
bench_resource_uri
# The projects' own builds are cold, and the base cache is the default one.
unset CARGO_TARGET_DIR SHIPMOOR_BASE_CACHE
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
  printf '/cache/\n/evidence/\n/verify.md\n/claim-check.*.json\n' > .shipmoor/.gitignore
}

# ---- a pytest test of 2 s (quick mode: 1 s) at each side ----------------------------------
sl="$work/sleepy"
new_repo "$sl"
cd "$sl"
mkdir -p clamp tests
printf 'def clamp(x, lo, hi):\n    return lo if x < lo else x\n' > clamp/__init__.py
git add -A; git commit --quiet -m base
sl_base="$(git rev-parse HEAD)"
git switch --quiet -c change
printf 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n' > clamp/__init__.py
cat > "tests/test_clamp_${tag_ident}.py" <<PY
import time

from clamp import clamp


def test_clamps_high():
    time.sleep($sleep_s)
    assert clamp(50, 0, 10) == 10
PY
acceptance
git add -A; git commit --quiet -m "clamp: values above the range"

# ---- globset from its published sources --------------------------------------------------
gs="$work/globset"
gs_base=""
if [ "${#projects[@]}" -gt 1 ]; then
  # shellcheck source=bench/globset.sh
  . "$here/globset.sh"
  globset_repo "$gs" "$work" "$tag_ident" change
  must env -C "$gs" cargo fetch --quiet
fi

# push NAME REPO BASE LABEL CODE_FILE [FLAGS...]: a new head commit changing only CODE_FILE
# (push 1 uses the change as it is), then claim-check, timed, in a temporary directory made
# first (claim-check refuses one that does not exist); appended to $work/times-NAME. Anything
# but the change's verdict, READY, stops the benchmark.
push() {
  local name="$1" repo="$2" base="$3" label="$4" file="$5"
  shift 5
  cd "$repo"
  if [ "$label" != push1 ]; then
    case "$file" in *.rs) echo "// $label" >> "$file" ;; *) echo "# $label" >> "$file" ;; esac
    must git commit --quiet -am "$label: code only"
  fi
  echo "==> [$name] $label $*"
  rm -rf "$work/tmp"
  mkdir -p "$work/tmp"
  local s e code=0
  s=$(now)
  "$bin" claim-check --base "$base" --format json --quiet --temp-dir "$work/tmp" "$@" > "$work/$name-$label.json" || code=$?
  e=$(now)
  echo "    exit $code"
  expect_verdict "$code" "$work/$name-$label.json" READY "\`$bin claim-check --base $base $*\` ($label) in $repo"
  echo "$label $s $e" >> "$work/times-$name"
}

for round in $(seq 1 "$rounds"); do
  echo "==> round $round of $rounds"
  for project in "${projects[@]}"; do
    if [ "$project" = sleepy ]; then repo="$sl"; base="$sl_base"; code=clamp/__init__.py
    else repo="$gs"; base="$gs_base"; code=src/lib.rs; fi
    rm -rf "$repo/.shipmoor/cache"
    push "$project" "$repo" "$base" push1 "$code"
    push "$project" "$repo" "$base" push2 "$code"
    push "$project" "$repo" "$base" push3 "$code"
    push "$project" "$repo" "$base" push2-uncached "$code" --base-cache none
  done
done

python3 - "$work" "$quick" "${projects[@]}" <<'PY'
import json, os, re, statistics, sys
work, quick, projects = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
print()
if quick:
    print("QUICK (debug build, a 1 s test, not figures):")
print(f"{'project':<10} {'push 1':>8} {'push 2':>8} {'push 3':>8} {'uncached':>9} {'2 / 1':>6} {'3 / 1':>6}  cache's own cost on each hit")
for name in projects:
    t = {}
    for line in open(os.path.join(work, f"times-{name}")):
        k, s, e = line.split()
        t.setdefault(k, []).append(float(e) - float(s))
    m = {k: statistics.median(v) for k, v in t.items()}
    costs = []
    for label in ("push2", "push3"):
        r = json.load(open(os.path.join(work, f"{name}-{label}.json")))["result"]
        state = (r.get("base_cache") or {}).get("state")
        row = next((x for x in r["runtime"] if x["runner"] == "base cache"), None)
        found = re.search(r"own cost (\d+) ms", row["result"]) if row else None
        costs.append(f"{label}: {state}, {found.group(1) + ' ms' if found else 'n/a'}")
    print(f"{name:<10} {m['push1']:>7.2f}s {m['push2']:>7.2f}s {m['push3']:>7.2f}s {m['push2-uncached']:>8.2f}s "
          f"{m['push2'] / m['push1']:>6.2f} {m['push3'] / m['push1']:>6.2f}  {'; '.join(costs)}")
    for label in ("push1", "push2"):
        r = json.load(open(os.path.join(work, f"{name}-{label}.json")))["result"]
        print(f"  [{label}] verdict {r['verdict']}")
        for x in r["runtime"]:
            print(f"    {x['side']:<26} {x['seconds']:>6.1f}s  {x['runner']:<11} {x['result'][:90]}")
print()
print("targets: push 2 / push 1 at most 0.6; the cache's own cost on a hit under 50 ms")
PY
quick_note
