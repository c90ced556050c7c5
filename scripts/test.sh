#!/usr/bin/env bash
# Runs the whole test suite. Installs what the tests need when it is missing (pytest from PyPI,
# cargo-nextest from crates.io); a test whose tool is still missing fails and names the tool.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m pytest --version >/dev/null 2>&1 && ! command -v pytest >/dev/null 2>&1; then
  echo "test.sh: installing pytest" >&2
  python3 -m pip install --quiet pytest
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "test.sh: installing cargo-nextest" >&2
  cargo install --locked cargo-nextest
fi
if [ ! -f ../shared/vectors/fusion-v3.json ]; then
  echo "test.sh: ../shared/vectors is missing; the fusion tests read the published vectors from there" >&2
fi
exec cargo nextest run --no-fail-fast --failure-output final "$@"
