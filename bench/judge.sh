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
# server (tests/common/chat_server.rs), so nothing but loopback is used.
#
#   bash bench/judge.sh [CRITERIA [CONCURRENCY [DELAY_MS [ROUNDS]]]]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
criteria="${1:-20}"
concurrency="${2:-4}"
delay="${3:-200}"
rounds="${4:-7}"
for v in "$criteria" "$concurrency" "$rounds"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench/judge.sh: '$v' is not a positive integer" >&2; exit 2; }
done
[[ "$delay" =~ ^[0-9]+$ ]] || { echo "bench/judge.sh: DELAY_MS '$delay' is not an integer" >&2; exit 2; }

echo "==> building benches/judge.rs (release)"
cargo bench --quiet --no-run --bench judge --manifest-path "$root/Cargo.toml"
echo "==> $(cargo --version); $(nproc) CPUs"
cargo bench --quiet --bench judge --manifest-path "$root/Cargo.toml" -- \
  --criteria "$criteria" --concurrency "$concurrency" --delay-ms "$delay" --rounds "$rounds"
