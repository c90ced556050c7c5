"""A real MCP client (the PyPI `mcp` SDK) that drives `shipmoor mcp` for the tests.

Usage: mcp_client.py SHIPMOOR REPO SCENARIO [ARGS_JSON]
  list                 initialize, list the tools: their names and input schemas
  call NAME ARGS_JSON  call one tool, with a progress token: its result and the progress seen
  cancel ARGS_JSON     call claim_check and cancel it once a test is running; then close
Prints one JSON document on stdout.
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def result_of(r):
    text = "\n".join(c.text for c in r.content if getattr(c, "type", None) == "text")
    return {"is_error": bool(r.is_error), "structured": r.structured_content, "text": text}


async def main():
    shipmoor, repo, scenario = sys.argv[1], sys.argv[2], sys.argv[3]
    args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    params = StdioServerParameters(command=shipmoor, args=["mcp", "--repo", repo], cwd=repo)
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
                    if message and "running" in message:
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
                # A later call on the same session still works.
                tags = await session.call_tool("acceptance_tags", {})
                out["after"] = result_of(tags)
    print(json.dumps(out))


anyio.run(main)
