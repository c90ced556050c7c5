#!/usr/bin/env bash
# Benchmark of the tag scan (book: floor.md): the floor finds each tag's candidate files in the head
# tree before it lists or builds anything, and that scan must stay within 1.5x of ripgrep over
# the same tree. This generates a git repository of FILES files (default 100,000; source-like
# text, a few of them binary, a handful carrying tags in their path or contents), then times,
# in one run and on the same warm tree:
#   - `shipmoor acceptance tags --where` (the same scan the floor runs: `git ls-files`, every
#     tracked file's path and contents, every tag in one pass, files in parallel);
#   - `rg -F -i -l -e TAG …` for the same tags;
# and prints both and their ratio (the median of RUNS runs each, alternated). Both must find
# the tagged files (a scan or an rg that fails, or finds nothing, stops the script with a
# message naming the command); the script exits 1 when the ratio is over the limit.
#
#   bash bench/scan.sh [FILES] [RUNS]      # SHIPMOOR_BIN=path skips the release build
#   QUICK=1 bash bench/scan.sh   # quick mode (bench/common.sh): 2,000 files, 3 runs, the debug
#                                # build; not figures, and the limit is not enforced
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
files="${1:-$(quick_or 100000 2000)}"
runs="${2:-$(quick_or 5 3)}"
for v in "$files" "$runs"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "FILES and RUNS are positive integers, not '$v'"
done
limit="1.5"
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-scan-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

if ! command -v rg >/dev/null; then
  echo "==> installing ripgrep"
  apt-get install -y -qq ripgrep >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq ripgrep; } ||
    die "\`apt-get install ripgrep\` failed"
fi
command -v bc >/dev/null || die "missing tool \`bc\` (apt-get install bc)"
shipmoor_bin

repo="$work/repo"
echo "==> generating $files files in $repo"
python3 - "$repo" "$files" "$work/acceptance.yaml" >"$work/tags.txt" <<'PY'
import hashlib, os, random, sys
repo, n, acceptance = sys.argv[1], int(sys.argv[2]), sys.argv[3]
random.seed(8)
ids = ["refund-idempotent", "audit-log", "clamp-high", "receipt-email", "nowhere-at-all"]
def tag(i):
    return "AC-" + i.upper() + "-" + hashlib.sha256(b"claim-check/tag/v1\0" + i.encode()).hexdigest()[:4]
tags = [tag(i) for i in ids]
with open(acceptance, "w") as f:
    f.write("version: 1\ncriteria:\n")
    for i in ids:
        f.write(f"  - id: {i}\n    ac: {i.replace('-', ' ')} works.\n")
words = ["fn", "let", "self", "return", "value", "order", "refund", "config", "parse", "error",
         "result", "match", "impl", "struct", "test", "assert", "client", "request", "item", "id"]
def line():
    return " ".join(random.choice(words) for _ in range(random.randint(3, 12)))
# The last tag is in no file: the scan must read everything to say so.
placed = {}
for k, t in enumerate(tags[:-1]):
    for j in range(3):
        placed[random.randrange(n)] = (t, "content" if j else "path")
for i in range(n):
    d = os.path.join(repo, f"pkg{i % 100:02d}", f"mod{(i // 100) % 50:02d}")
    os.makedirs(d, exist_ok=True)
    name = f"file{i}.rs"
    body = [line() for _ in range(random.randint(5, 60))]
    if i in placed:
        t, how = placed[i]
        ident = t.lower().replace("-", "_")
        if how == "path":
            name = f"file{i}_{ident}.rs"
        else:
            body.insert(len(body) // 2, f"#[test] fn check_{ident}() {{}}")
    data = ("\n".join(body) + "\n").encode()
    if i % 1000 == 7:
        data = b"\x00\x01\x02" + data  # binary: skipped by both
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
print(" ".join(tags))
PY
tags="$(cat "$work/tags.txt")"
cd "$repo"
must git init --quiet --initial-branch=main
git config user.name bench; git config user.email bench@example.com
git config gc.auto 0  # no background gc racing the cleanup
must git add -A
must git commit --quiet -m tree
echo "    $(git ls-files | wc -l) tracked files, $(du -sh --exclude=.git . | cut -f1)"

rg_args=(-F -i -l)
for t in $tags; do rg_args+=(-e "$t"); done
scan=("$bin" acceptance tags --where --repo "$repo" --acceptance "$work/acceptance.yaml")

# rg exits 0 when it found a file and 1 when it found none (the usual answer here: the files
# spell the tags as identifiers, which a literal search does not fold), 2 on an error; the scan
# exits 0.
run_rg() {
  local code=0
  rg "${rg_args[@]}" . >"$work/rg.txt" 2>"$work/rg.err" || code=$?
  if [ "$code" != 0 ] && [ "$code" != 1 ]; then
    show_log "$work/rg.err"
    die "\`rg ${rg_args[*]} .\` in $repo failed (exit $code)"
  fi
}
run_scan() {
  local code=0
  "${scan[@]}" >"$work/ours.txt" 2>"$work/ours.err" || code=$?
  if [ "$code" != 0 ]; then
    show_log "$work/ours.err"
    die "\`${scan[*]}\` failed (exit $code)"
  fi
}

# Warm the page cache for both.
run_rg
run_scan
# Four of the five tags are placed in files; the fifth is in none.
[ "$(grep -c '(in no tracked file)' "$work/ours.txt")" = 1 ] ||
  { show_log "$work/ours.txt"; die "\`${scan[*]}\` did not find the four placed tags (and only those)"; }

now() { date +%s.%N; }
ours=(); theirs=()
for _ in $(seq 1 "$runs"); do
  t0=$(now); run_scan; t1=$(now)
  run_rg; t2=$(now)
  ours+=("$(echo "$t1 - $t0" | bc)"); theirs+=("$(echo "$t2 - $t1" | bc)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m_ours="$(median "${ours[@]}")"; m_rg="$(median "${theirs[@]}")"
ratio="$(echo "scale=2; $m_ours / $m_rg" | bc)"

echo "==> where the tags are (shipmoor acceptance tags --where)"
sed 's/^/    /' "$work/ours.txt"
echo "==> rg -F -i -l found $(wc -l <"$work/rg.txt") file(s) (literal tags only: rg does not fold - and _)"
is_quick && echo "QUICK (debug build, not figures):"
printf 'files: %s\nruns: %s\nshipmoor scan: %.3fs (median)\nrg -F -i:      %.3fs (median)\nratio: %s (limit %s)\n' \
  "$files" "$runs" "$m_ours" "$m_rg" "$ratio" "$limit"
if [ "$(echo "$ratio <= $limit" | bc)" = 1 ]; then
  echo "within the limit"
elif is_quick; then
  echo "over the limit (quick mode: not enforced)"
else
  echo "OVER the limit"
  die "the scan took ${ratio}x rg's time, over the limit of ${limit}x"
fi
quick_note
