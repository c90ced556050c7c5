"""The MCP server's own cost per call, against the command line on the same change, in one process.

Usage: mcp_bench.py SHIPMOOR REPO BASE ROUNDS
For each measured command, ROUNDS interleaved pairs: the command line run as a subprocess (the
baseline), then the same work as a tool call in one open MCP session (the PyPI mcp SDK). Prints
the medians, the ratio and the difference: what the server adds to a call beyond the run itself
(the JSON-RPC round trip, its own child process, reading the result and shaping it).
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


def cli(shipmoor, repo, args):
    start = time.perf_counter()
    subprocess.run([shipmoor, *args], cwd=repo, capture_output=True, check=False)
    return time.perf_counter() - start


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
            await session.call_tool("claim_check", {"base": base})
            for name, tool_args, cli_args, n in cases:
                via_cli, via_mcp = [], []
                for _ in range(n):
                    via_cli.append(cli(shipmoor, repo, cli_args))
                    start = time.perf_counter()
                    r = await session.call_tool(name, tool_args)
                    via_mcp.append(time.perf_counter() - start)
                    assert not r.is_error, r
                c, m = statistics.median(via_cli), statistics.median(via_mcp)
                print(
                    f"{name:16} {n:3} calls  command line {c * 1000:8.1f} ms  "
                    f"MCP {m * 1000:8.1f} ms  ratio {m / c:5.2f}  "
                    f"server's own cost {(m - c) * 1000:+7.1f} ms per call"
                )


anyio.run(main)
