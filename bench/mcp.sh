#!/usr/bin/env bash
# Benchmark of `shipmoor mcp`: what the server adds to a call beyond the run itself, against the
# command line on the same change, measured in one process (bench/mcp_bench.py with the PyPI
# mcp SDK). The change: a pytest project whose tagged test fails at base and passes at head.
# Measured, as interleaved pairs: `acceptance_tags` and `explain` (cheap, so the difference is
# the server's cost: the JSON-RPC round trip, its own child process, reading and shaping the
# result), and `claim_check` (the whole run). The target: under 50 ms per call.
#
#   bash bench/mcp.sh
#   SHIPMOOR_BIN=target/debug/shipmoor bash bench/mcp.sh   # skip the release build
#   ROUNDS=10 bash bench/mcp.sh                           # more pairs (10× that for the cheap calls)
#   QUICK=1 bash bench/mcp.sh      # quick mode (bench/common.sh): 1 round (10 pairs of each
#                                  # cheap call, 1 of claim_check), the debug build; not figures
#
# Every call, on the command line and through the server, must succeed: the commands exit 0,
# claim_check's verdict is the change's, READY, and no tool call is an error; anything else
# stops the script with a message naming the command. Needs cargo, git, python3 with pytest and
# venv. Nothing here asserts a time: it prints what it measured.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"
rounds="${ROUNDS:-$(quick_or 5 1)}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, not '$rounds'"
work="$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-mcp-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
export SHIPMOOR_BASE_CACHE=none

python3 -m pytest --version >/dev/null 2>&1 || must python3 -m pip install --quiet pytest
venv="$(bench_target_dir)/test-tools/mcp-venv"
if ! "$venv/bin/python" -c 'import mcp.client.stdio' >/dev/null 2>&1; then
  echo "==> installing the PyPI mcp SDK into $venv"
  must python3 -m venv "$venv"
  must "$venv/bin/pip" install --quiet mcp==2.3.0
fi
shipmoor_bin
bench_resource_uri
unset CARGO_TARGET_DIR
tag="$(python3 -c 'import hashlib;print("ac_clamp_"+hashlib.sha256(b"claim-check/tag/v1\0clamp").hexdigest()[:4])')"

repo="$work/repo"
mkdir -p "$repo/tests" && cd "$repo"
git init --quiet --initial-branch=main
git config user.name bench && git config user.email bench@example.com
printf '[pytest]\n' > pytest.ini
printf 'def clamp(x, hi):\n    return x\n' > clamp.py
printf 'from clamp import clamp\n\ndef test_low():\n    assert clamp(1, 5) == 1\n' > tests/test_low.py
git add -A && git commit --quiet -m base
base="$(git rev-parse HEAD)"
printf 'def clamp(x, hi):\n    return min(x, hi)\n' > clamp.py
printf 'from clamp import clamp\n\ndef test_high():\n    assert clamp(9, 5) == 5\n' > "tests/test_${tag}.py"
mkdir -p .shipmoor
printf 'version: 1\ncriteria:\n  - id: clamp\n    ac: Values above the bound are clamped.\n' > .shipmoor/acceptance.yaml
git add -A && git commit --quiet -m head

echo "==> $rounds rounds ($bin)"
is_quick && echo "QUICK (debug build, not figures):"
code=0
"$venv/bin/python" "$here/mcp_bench.py" "$bin" "$repo" "$base" "$rounds" || code=$?
[ "$code" = 0 ] || die "\`$venv/bin/python $here/mcp_bench.py $bin $repo $base $rounds\` failed (exit $code; its message is above)"
quick_note
