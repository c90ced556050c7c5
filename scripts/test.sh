#!/usr/bin/env bash
# Runs the whole test suite. Installs what the tests need when it is missing (pytest,
# check-jsonschema and, in a virtual environment, the mcp SDK from PyPI; Go, docker-registry,
# skopeo, cmark-gfm, chromium, sudo and python3-pytest from Debian; cargo-nextest from crates.io; the vitest and jest tests install those two from npm
# themselves); a test whose tool is still missing fails and names the tool.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m pytest --version >/dev/null 2>&1 && ! command -v pytest >/dev/null 2>&1; then
  echo "test.sh: installing pytest" >&2
  python3 -m pip install --quiet pytest
fi
if ! command -v go >/dev/null 2>&1; then
  echo "test.sh: installing Go (Debian's golang-go)" >&2
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && apt-get install -y -qq golang-go; } >&2 || echo "test.sh: could not install Go; the go tests will fail naming it" >&2
  else
    echo "test.sh: Go is missing and this is not root: install golang-go; the go tests will fail naming it" >&2
  fi
fi
if [ ! -x /usr/bin/docker-registry ] || ! command -v skopeo >/dev/null 2>&1; then
  echo "test.sh: installing Debian's docker-registry and skopeo (the OCI tests)" >&2
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && apt-get install -y -qq docker-registry skopeo; } >&2 || echo "test.sh: could not install docker-registry and skopeo; the OCI tests will fail naming them" >&2
  else
    echo "test.sh: docker-registry or skopeo is missing and this is not root: install both; the OCI tests will fail naming them" >&2
  fi
fi
if ! command -v cmark-gfm >/dev/null 2>&1 || [ ! -x /usr/bin/chromium ]; then
  echo "test.sh: installing Debian's cmark-gfm and chromium (the rendering test, tests/integration/render.rs)" >&2
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && apt-get install -y -qq cmark-gfm chromium fonts-noto-color-emoji; } >&2 || echo "test.sh: could not install cmark-gfm and chromium; the rendering test will fail naming them" >&2
  else
    echo "test.sh: cmark-gfm or chromium is missing and this is not root: install both; the rendering test will fail naming them" >&2
  fi
fi
if ! command -v sudo >/dev/null 2>&1 || ! /usr/bin/python3 -m pytest --version >/dev/null 2>&1; then
  echo "test.sh: installing Debian's sudo and python3-pytest (the sandbox tests, tests/integration/sandbox.rs)" >&2
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && apt-get install -y -qq sudo python3-pytest; } >&2 || echo "test.sh: could not install sudo and python3-pytest; the sandbox tests will fail naming them" >&2
  else
    echo "test.sh: sudo or Debian's python3-pytest is missing and this is not root: install both; the sandbox tests will fail naming them" >&2
  fi
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "test.sh: node and npm are missing: the vitest and jest tests will fail naming them (install Node.js 20+)" >&2
fi
if ! command -v check-jsonschema >/dev/null 2>&1; then
  echo "test.sh: installing check-jsonschema" >&2
  python3 -m pip install --quiet check-jsonschema
fi
# pyenv's `python3` is a shim, a shell script that costs about 0.3 s a start before Python's
# own; the floor starts Python several times a run. The tests run the interpreter the shim
# resolves to, first on PATH (what actions/setup-python does on a GitHub runner).
python_dir=$(python3 -c 'import os, sys; print(os.path.dirname(sys.executable))' 2>/dev/null || true)
if [ -n "$python_dir" ] && [ "$(dirname "$(command -v python3)")" != "$python_dir" ]; then
  echo "test.sh: $(command -v python3) is a shim: the tests run $python_dir/python3" >&2
  export PATH="$python_dir:$PATH"
fi
# The MCP tests drive `shipmoor mcp` with the PyPI mcp SDK, in a virtual environment of its own.
mcp_venv=target/test-tools/mcp-venv
if ! "$mcp_venv/bin/python" -c 'import mcp.client.stdio' >/dev/null 2>&1; then
  echo "test.sh: installing the PyPI mcp SDK into $mcp_venv (the MCP tests)" >&2
  { python3 -m venv "$mcp_venv" && "$mcp_venv/bin/pip" install --quiet mcp==2.3.0; } >&2 || echo "test.sh: could not install the mcp SDK; the MCP tests will fail naming it" >&2
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "test.sh: installing cargo-nextest" >&2
  cargo install --locked cargo-nextest
fi
# Under CI (CI set: the CI runs .ci/run with CI=true, as GitHub Actions sets it) the `ci` profile
# of .config/nextest.toml: every test runs, a hung one is stopped, and the JUnit report is
# target/nextest/ci/junit.xml.
profile=()
if [ -n "${CI:-}" ]; then
  profile=(--profile ci)
fi
exec cargo nextest run --workspace --no-fail-fast --failure-output final "${profile[@]}" "$@"
