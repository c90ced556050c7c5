#!/usr/bin/env bash
# Benchmark of criterion derivation (`shipmoor::acceptance::derive`) on 5 MiB bodies, beside a
# plain read of the same file, in one run of this script:
#
#   bash bench/derive.sh [N [MIB]]   # N: timed calls per measurement (default 20)
#                                    # MIB: body size in MiB (default 5)
#
# 1. Builds benches/derive.rs (release).
# 2. Writes three bodies of MIB MiB from the corpus (tests/fixtures/derive/*.md):
#    - repeated.md: the corpus bodies one after another, over and over (every criterion recurs:
#      the merge of exact duplicates);
#    - distinct.md: the same, each round's lines ending in a round number, so that every
#      criterion is new (the near-duplicate buckets and the ids at their largest);
#    - ci-log.md: the corpus's large-ci-log seed grown to MIB MiB (a pasted log in a fence: the
#      common several-MiB body).
# 3. `cargo bench --bench derive`: per body, the median of N plain reads (`read_to_string`) and
#    of N derivations of the text in memory, the ratio, and the criteria count. The target: each
#    derivation under 100 ms (the bench exits 1 when one is not, and so does this script).
#
#   QUICK=1 bash bench/derive.sh   # quick mode (bench/common.sh): 2 calls on 1 MiB bodies, built
#                                  # with the dev profile; not figures, and the 100 ms target is
#                                  # not enforced
#
# A build or a run of the bench that fails otherwise stops the script with a message naming the
# command. Needs: cargo, python3. No network.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
root="$bench_root"

stage() {
  echo
  echo "==> $*"
}

n="${1:-$(quick_or 20 2)}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N (timed calls) must be a positive integer, not '$n'"
mib="${2:-$(quick_or 5 1)}"
[[ "$mib" =~ ^[1-9][0-9]*$ ]] || die "MIB (body size) must be a positive integer, not '$mib'"

for t in cargo python3; do
  command -v "$t" >/dev/null 2>&1 || die "missing tool \`$t\`"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-derive-bench-XXXXXX")"
cleanup() {
  local status=$?
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stage "building benches/derive.rs ($(quick_or release 'dev profile, quick mode'))"
exe="$(bench_exe derive "$work")"

stage "writing ${mib} MiB bodies from tests/fixtures/derive"
python3 - "$root/tests/fixtures/derive" "$work" "$mib" <<'PY'
import glob, os, sys
corpus, out, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = mib << 20
bodies = [open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(corpus, "*.md")))]
joined = "\n\n".join(bodies) + "\n\n"

def grow(make):
    parts, total, k = [], 0, 0
    while total < size:
        part = make(k)
        parts.append(part)
        total += len(part.encode())
        k += 1
    return "".join(parts)

def distinct(k):
    # A round number on every prose or list line; fences, tables and HTML lines keep their shape.
    lines = []
    for line in joined.split("\n"):
        t = line.strip()
        if t and not t.startswith(("```", "~~~", "|", "<", "#", "%%")) and set(t) - set("-=*_ "):
            line = f"{line} r{k}"
        lines.append(line)
    return "\n".join(lines)

seed = open(os.path.join(corpus, "large-ci-log.seed"), encoding="utf-8").read()
head, rest = seed.split("%%repeat%%\n", 1)
block, tail = rest.split("%%end%%\n", 1)
ci_log = head + block * (size // len(block.encode()) + 1) + tail

for name, text in [("repeated.md", grow(lambda k: joined)), ("distinct.md", grow(distinct)), ("ci-log.md", ci_log)]:
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"  {name}: {len(text.encode()) / (1 << 20):.2f} MiB")
PY

stage "in process$(quick_or '' ' (QUICK: dev profile, not figures)')"
bench_run "$work/derive.log" MISSED "$exe" --iterations "$n" \
  --body "$work/repeated.md" --body "$work/distinct.md" --body "$work/ci-log.md"
quick_note
