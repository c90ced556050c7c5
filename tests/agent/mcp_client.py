"""A real MCP client (the PyPI `mcp` SDK) that drives `shipmoor mcp` for the tests.

Usage: mcp_client.py SHIPMOOR REPO SCENARIO [ARGS_JSON]
  list                 initialize, list the tools: their names, input schemas, and each
                       tool as listed (title, annotations)
  call NAME ARGS_JSON  call one tool, with a progress token: its result and the progress seen
  cancel ARGS_JSON     call claim_check and cancel it once a test is running; then close
Prints one JSON document on stdout.
"""

import json
import os
import subprocess
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def result_of(r):
    text = "\n".join(c.text for c in r.content if getattr(c, "type", None) == "text")
    return {"is_error": bool(r.is_error), "structured": r.structured_content, "text": text}


async def main():
    shipmoor, repo, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    # The whole environment: the SDK passes only a few variables by default, and the tests steer
    # the server's runs with theirs (SHIPMOOR_TMPDIR, SHIPMOOR_BASE_CACHE).
    params = StdioServerParameters(
        command=shipmoor, args=["mcp", "--repo", repo], cwd=repo, env=dict(os.environ)
    )
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init.server_info.name
            out["instructions"] = init.instructions
            if scenario == "list":
                tools = await session.list_tools()
                out["tools"] = {t.name: t.input_schema for t in tools.tools}
                out["output_schemas"] = {t.name: t.output_schema for t in tools.tools}
                # Each tool as the wire has it (camelCase): its title and annotations too.
                out["listed"] = {
                    t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for t in tools.tools
                }
            elif scenario == "call":
                name = args.pop("__tool")
                progress = []

                async def on_progress(value, total, message):
                    progress.append({"progress": value, "message": message})

                r = await session.call_tool(name, args, progress_callback=on_progress)
                out["result"] = result_of(r)
                out["progress"] = progress
            elif scenario == "cancel":
                progress = []
                running = anyio.Event()

                async def on_progress(value, total, message):
                    progress.append(message)
                    if message and "bound test" in message:
                        running.set()

                async with anyio.create_task_group() as tg:
                    async def call():
                        r = await session.call_tool("claim_check", args, progress_callback=on_progress)
                        out["result"] = result_of(r)

                    tg.start_soon(call)
                    with anyio.fail_after(120):
                        await running.wait()
                    # The test is running: abandon the call, which sends notifications/cancelled.
                    tg.cancel_scope.cancel()
                out["cancelled"] = "result" not in out
                out["progress"] = progress
                # While the session is still open: the cancelled run's worktrees go away.
                start = time.monotonic()
                while True:
                    listed = subprocess.run(
                        ["git", "-C", repo, "worktree", "list", "--porcelain"],
                        capture_output=True, text=True, check=True,
                    ).stdout
                    worktrees = listed.count("worktree ")
                    if worktrees <= 1 or time.monotonic() - start > 30:
                        break
                    await anyio.sleep(0.1)
                out["worktrees_after_cancel"] = worktrees
                out["seconds_to_clean"] = round(time.monotonic() - start, 2)
                # A later call on the same session still works.
                tags = await session.call_tool("acceptance_tags", {})
                out["after"] = result_of(tags)
    print(json.dumps(out))


anyio.run(main)
