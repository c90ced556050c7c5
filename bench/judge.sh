#!/usr/bin/env bash
# Benchmark of the judge stage in full mode (book: judge.md), `judge::run` over a real git repository
# (a change of 20 files) with the chat-completions transport:
# CRITERIA criteria (default 20) judged at CONCURRENCY (default 4) against a chat-completions
# endpoint on loopback that answers each request after DELAY ms (default 200), and, in the same
# run, rounds alternated, against one that answers at once. Prints
#   - the judge stage's wall time beside the ideal ceil(CRITERIA / CONCURRENCY) x DELAY ms and
#     their ratio (the target is within 1.2x; the script fails above it);
#   - the engine's own overhead per criterion: the wall time against the immediate endpoint,
#     divided by CRITERIA (the change read with git, each request built, every request and
#     reply kept as evidence, a runtime, an HTTP client, the POSTs, each answer read and
#     audited, the loopback server's own work included);
# each the median of ROUNDS rounds (default 7). The endpoint is benches/judge.rs's in-process
# server (tests/common/chat_server.rs), so nothing but loopback is used. A build or a run of
# the bench that fails (anything but its own "OVER TARGET") stops the script with a message
# naming the command.
#
#   bash bench/judge.sh [CRITERIA [CONCURRENCY [DELAY_MS [ROUNDS]]]]
#   QUICK=1 bash bench/judge.sh   # quick mode (bench/common.sh): 4 criteria at concurrency 2,
#                                 # 1 round, built with the dev profile; not figures, and the
#                                 # 1.2x target is not enforced
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
criteria="${1:-$(quick_or 20 4)}"
concurrency="${2:-$(quick_or 4 2)}"
delay="${3:-200}"
rounds="${4:-$(quick_or 7 1)}"
for v in "$criteria" "$concurrency" "$rounds"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench/judge.sh: '$v' is not a positive integer" >&2; exit 2; }
done
[[ "$delay" =~ ^[0-9]+$ ]] || { echo "bench/judge.sh: DELAY_MS '$delay' is not an integer" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-judge-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "==> building benches/judge.rs ($(quick_or release 'dev profile, quick mode'))"
exe="$(bench_exe judge "$work")"
echo "==> $(cargo --version); $(nproc) CPUs"
is_quick && echo "QUICK (dev profile, not figures):"
bench_run "$work/judge.log" "OVER TARGET" "$exe" \
  --criteria "$criteria" --concurrency "$concurrency" --delay-ms "$delay" --rounds "$rounds"
quick_note
