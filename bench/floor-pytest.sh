#!/usr/bin/env bash
# Benchmark of the floor on a generated pytest project: 10 criteria whose tagged tests live in 3
# test files. Prints, from one run: the number of pytest processes claim-check started per side
# (counted twice: from the runtime rows of its result, and by a `python3` wrapper on PATH that
# logs every `-m pytest` start with its working directory), and the ratio of claim-check's total
# time to one plain pytest run of the bound tests at head.
#
#   bash bench/floor-pytest.sh [RUNS]     # RUNS: claim-check --runs (default 1)
#   SHIPMOOR_BIN=target/debug/shipmoor bash bench/floor-pytest.sh   # skip the release build
#
# What to expect: one listing at head, then per side and run one process per test file (3), so
# 1 + 3*RUNS at head and 3*RUNS at base (before, pytest was started twice per bound test per run,
# after a `--collect-only` of its own: 41 at --runs 1). With tests this cheap each process is
# mostly pytest's own start, so the floor costs about (1 + 2 * files) starts against the plain
# run's one: the ratio to one plain run cannot come near 2 while tests of different files never
# share a process. The script also prints the ratio to plain runs of the same files one process
# each (what isolation by file costs at head), and what the engine itself took.
# claim-check must reach the change's verdict, READY (all 10 criteria satisfied), and the plain
# runs at head must pass; anything else stops the script with a message naming the command.
# Nothing here asserts a time: it prints.
#
#   QUICK=1 bash bench/floor-pytest.sh   # quick mode (bench/common.sh): the debug build (the
#                                        # project and --runs 1 are already the smallest); its
#                                        # ratios are not figures
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
runs="${1:-1}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, not '$runs'"
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-bench-pytest-XXXXXX")"
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

shipmoor_bin
bench_resource_uri

# The real interpreter (not a version manager's shim), for the wrapper and the plain run alike.
python="$(python3 -c 'import sys; print(sys.executable)')"
"$python" -m pytest --version >/dev/null 2>&1 || die "pytest is not installed for $python: pip install pytest"
# The wrapper logs into a directory of its own, which claim-check's sandbox lets the floor's
# commands write (--sandbox-write below); a start it cannot log fails the command.
mkdir -p "$work/wrap" "$work/starts"
cat > "$work/wrap/python3" <<SH
#!/bin/sh
case " \$* " in
  *" -m pytest "*) case " \$* " in *" --version "*) ;; *) echo "\$PWD" >> "$work/starts/pytest-starts.log" || exit 97 ;; esac ;;
esac
exec "$python" "\$@"
SH
chmod +x "$work/wrap/python3"

ident() {
  "$python" -c 'import hashlib,sys; i=sys.argv[1]; print(("AC-"+i.upper()+"-"+hashlib.sha256(b"claim-check/tag/v1\0"+i.encode()).hexdigest()[:4]).lower().replace("-","_"))' "$1"
}

repo="$work/repo"
mkdir -p "$repo/svc" "$repo/tests" "$repo/.shipmoor"
cd "$repo"
git init --quiet --initial-branch=main
git config user.name bench; git config user.email bench@example.com
printf '[pytest]\ntestpaths = tests\n' > pytest.ini
: > svc/__init__.py
# Base: every function is off by one; head fixes them all.
{
  for i in $(seq 1 10); do echo "def f$i(x):"; echo "    return x + $i + 1"; echo; done
} > svc/calc.py
printf 'def test_plain():\n    assert 1 + 1 == 2\n' > tests/test_plain.py
git add -A; git commit --quiet -m base
base="$(git rev-parse HEAD)"

{
  for i in $(seq 1 10); do echo "def f$i(x):"; echo "    return x + $i"; echo; done
} > svc/calc.py
criteria=""
file_of() { if [ "$1" -le 4 ]; then echo refund; elif [ "$1" -le 7 ]; then echo report; else echo limits; fi; }
for f in refund report limits; do echo "from svc import calc" > "tests/test_$f.py"; done
for i in $(seq 1 10); do
  id="crit-$i"
  printf '\n\ndef test_f%d_%s():\n    assert calc.f%d(1) == %d\n' "$i" "$(ident "$id")" "$i" "$((i + 1))" >> "tests/test_$(file_of "$i").py"
  criteria="$criteria  - id: $id\n    ac: f$i adds $i.\n"
done
printf 'version: 1\ncriteria:\n%b' "$criteria" > .shipmoor/acceptance.yaml
git add -A; git commit --quiet -m head

echo "==> shipmoor claim-check (10 criteria in 3 test files, --runs $runs)"
: > "$work/starts/pytest-starts.log"
# The temporary directory must exist: claim-check refuses one that does not (exit 2).
mkdir -p "$work/tmp"
code=0
start=$(date +%s.%N)
PATH="$work/wrap:$PATH" "$bin" claim-check --base "$base" --runs "$runs" --format json --quiet \
  --temp-dir "$work/tmp" --sandbox-write "$work/starts" > "$work/result.json" || code=$?
end=$(date +%s.%N)
echo "    exit $code"
expect_verdict "$code" "$work/result.json" READY "\`$bin claim-check --base $base --runs $runs\` in $repo"

echo "==> one plain pytest run of the bound tests at head"
must git clone --quiet "$repo" "$work/plain"
ids="$("$python" - "$work/result.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))["result"]
ids = sorted({t["id"] for c in result["criteria"] for t in c["floor"].get("tests", [])})
print(" ".join(ids))
PY
)"
[ "$(wc -w <<<"$ids")" = 10 ] || die "claim-check bound $(wc -w <<<"$ids") tests, not the 10 tagged ones"
pstart=$(date +%s.%N)
# shellcheck disable=SC2086
must_log "$work/plain.log" env -C "$work/plain" PYTHONDONTWRITEBYTECODE=1 "$python" -m pytest -q -p no:cacheprovider $ids
pend=$(date +%s.%N)
echo "==> plain pytest runs of the same tests at head, one process per file"
fstart=$(date +%s.%N)
for f in refund report limits; do
  # shellcheck disable=SC2046,SC2086
  must_log "$work/plain-$f.log" env -C "$work/plain" PYTHONDONTWRITEBYTECODE=1 "$python" -m pytest -q -p no:cacheprovider \
    $(printf '%s\n' $ids | grep "^tests/test_$f.py::")
done
fend=$(date +%s.%N)

"$python" - "$work/result.json" "$work/starts/pytest-starts.log" "$work/tmp" "$start" "$end" "$pstart" "$pend" "$runs" "$fstart" "$fend" "$quick" <<'PY'
import json, re, sys
result = json.load(open(sys.argv[1]))["result"]
if sys.argv[11] == "1":
    print()
    print("QUICK (debug build, not figures):")
starts = [l.strip() for l in open(sys.argv[2]) if l.strip()]
tmp = sys.argv[3]
total = float(sys.argv[5]) - float(sys.argv[4])
plain = float(sys.argv[7]) - float(sys.argv[6])
runs = int(sys.argv[8])
per_file = float(sys.argv[10]) - float(sys.argv[9])
verdicts = [c["floor"]["result"] for c in result["criteria"]]
print()
print(f"verdict: {result['verdict']}  ({verdicts.count('satisfied')}/{len(verdicts)} criteria satisfied)")
rows = [r for r in result["runtime"] if r["runner"] == "pytest"]
for r in rows:
    print(f"  {r['side']:<26} {r['seconds']:>5.1f}s  {r['tests']:>2} test(s)  {r['result']:<28} {r['command'][-60:]}")
print()
for side, prefix in [("head", "head"), ("base", "base")]:
    from_rows = sum(1 for r in rows if r["side"].startswith(prefix))
    from_wrapper = sum(1 for s in starts if s.startswith(tmp) and re.search(f"/{side}(/|$)", s[len(tmp):]))
    print(f"pytest processes at {side}:  {from_rows:3d} (runtime rows)  {from_wrapper:3d} (wrapper)  "
          f"expected {(1 if side == 'head' else 0) + 3 * runs} (3 files x {runs} run(s){' + 1 listing' if side == 'head' else ''})")
commands = sum(r["seconds"] for r in result["runtime"])
in_pytest = sum(r["seconds"] for r in rows)
print(f"claim-check total:                               {total:7.2f} s")
print(f"  in pytest processes:                           {in_pytest:7.2f} s")
print(f"  engine and git (total - commands it ran):      {total - commands:7.2f} s")
print(f"one plain pytest run of the 10 bound tests:      {plain:7.2f} s  (at head)")
print(f"plain pytest runs of them, one process per file: {per_file:7.2f} s  (at head)")
print(f"ratio claim-check / one plain pytest run:        {total / plain:7.2f}")
print(f"ratio claim-check / plain runs per file:         {total / per_file:7.2f}  (one run per side: about {2 * runs}, plus the listing and the worktrees)")
PY
quick_note
