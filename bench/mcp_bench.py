"""The MCP server's own cost per call, against the command line on the same change, in one process.

Usage: mcp_bench.py SHIPMOOR REPO BASE ROUNDS
For each measured command, ROUNDS interleaved pairs: the command line run as a subprocess (the
baseline), then the same work as a tool call in one open MCP session (the PyPI mcp SDK). Prints
the medians, the ratio and the difference: what the server adds to a call beyond the run itself
(the JSON-RPC round trip, its own child process, reading the result and shaping it).

Every call must succeed, or the script stops (exit 1) naming it: each command exits 0 with a
JSON document that is not an error document, each tool call is not an error, and claim-check's
verdict, on both sides, is the change's: READY.
"""

import json
import os
import statistics
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


WANT = "READY"


class BenchFailure(Exception):
    """A call that did not succeed: the benchmark stops, naming it."""


def fail(message):
    raise BenchFailure(message)


def bench_failure(e):
    """The BenchFailure in e, or in the exception groups the MCP client's task groups raise."""
    if isinstance(e, BenchFailure):
        return e
    for inner in getattr(e, "exceptions", ()):
        found = bench_failure(inner)
        if found is not None:
            return found
    return None


def check_document(what, doc, verdict=False):
    """A command's JSON document, or a tool's structured result: not an error document; with
    verdict, claim-check's verdict (the run's `result.verdict`, the tool summary's `verdict`)
    is READY."""
    if not isinstance(doc, dict) or doc.get("schema") == "claim_check.error.v1":
        fail(f"{what}: no result: {json.dumps(doc)[:2000]}")
    if verdict:
        got = (doc.get("result") or doc).get("verdict")
        if got != WANT:
            fail(f"{what}: verdict {got}; this benchmark's change is {WANT}")


def cli(shipmoor, repo, args):
    start = time.perf_counter()
    r = subprocess.run([shipmoor, *args], cwd=repo, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    what = f"`{shipmoor} {' '.join(args)}` in {repo}"
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace")[-4000:])
        fail(f"{what} failed (exit {r.returncode})")
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        fail(f"{what} exited 0 but printed no JSON document: {r.stdout[:500]!r}")
    check_document(what, doc, verdict=args[0] == "claim-check")
    return elapsed


async def call(session, name, tool_args):
    r = await session.call_tool(name, tool_args)
    if r.is_error:
        text = " ".join(getattr(c, "text", "") for c in r.content)
        fail(f"the MCP tool call {name}({json.dumps(tool_args)}) failed: {text[:2000]}")
    check_document(f"the MCP tool call {name}({json.dumps(tool_args)})", r.structured_content, verdict=name == "claim_check")
    return r


async def main():
    shipmoor, repo, base, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    cases = [
        ("acceptance_tags", {}, ["acceptance", "tags", "--format", "json", "--where"], rounds * 10),
        ("explain", {"criterion": "clamp"}, ["explain", "--format", "json", "clamp"], rounds * 10),
        ("claim_check", {"base": base}, ["claim-check", "--format", "json", "-q", "--base", base], rounds),
    ]
    params = StdioServerParameters(
        command=shipmoor, args=["mcp", "--repo", repo], cwd=repo, env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            # The first claim-check writes the statement explain reads.
            await call(session, "claim_check", {"base": base})
            for name, tool_args, cli_args, n in cases:
                via_cli, via_mcp = [], []
                for _ in range(n):
                    via_cli.append(cli(shipmoor, repo, cli_args))
                    start = time.perf_counter()
                    await call(session, name, tool_args)
                    via_mcp.append(time.perf_counter() - start)
                c, m = statistics.median(via_cli), statistics.median(via_mcp)
                print(
                    f"{name:16} {n:3} calls  command line {c * 1000:8.1f} ms  "
                    f"MCP {m * 1000:8.1f} ms  ratio {m / c:5.2f}  "
                    f"server's own cost {(m - c) * 1000:+7.1f} ms per call"
                )


try:
    anyio.run(main)
except BaseException as e:
    found = bench_failure(e)
    if found is None:
        raise
    print(f"bench/mcp_bench.py: {found}", file=sys.stderr)
    sys.exit(1)
