"""A Streamable-HTTP MCP server for Parley's tests, built on PyPI's official `mcp` package.

Usage: python mcp_test_server.py [--token TOKEN] [--json-response]

Binds 127.0.0.1 on a free port, prints `PORT <n>` on its own line once it accepts
connections, and serves MCP at `/mcp` until killed. With `--token`, every request must carry
`Authorization: Bearer TOKEN` (401 otherwise). Every request's `Authorization` header is
appended to the file named by `--log-headers`, so a test can check what a client sent.
`/garbage` answers every request with 200 and plain text that is not JSON-RPC.

Tools:
  add(a, b)              the sum, as text
  slow_echo(text, seconds)  waits, reporting progress every 0.1 s, then echoes
  fail(message)          a tool execution error (isError) with the message
  crash()                the process exits mid-call (a server going down)
  unlock_tool()          registers `secret_tool` and notifies tools/list_changed
  count_calls(key)       how many times it was called with `key` (checks no call runs twice)
"""

import argparse
import asyncio
import os
import socket
import sys

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.responses import JSONResponse, PlainTextResponse


def build(token, header_log):
    server = MCPServer("parley-test")
    counts = {}

    @server.tool(description="Adds two numbers.")
    def add(a: float, b: float) -> str:
        total = a + b
        return str(int(total)) if total == int(total) else str(total)

    @server.tool(description="Waits `seconds`, reporting progress, then returns `text`.")
    async def slow_echo(text: str, seconds: float, ctx: Context) -> str:
        steps = max(1, int(seconds / 0.1))
        for step in range(steps):
            await asyncio.sleep(seconds / steps)
            await ctx.report_progress(step + 1, steps, f"step {step + 1} of {steps}")
        return text

    @server.tool(description="Always fails with `message`.")
    def fail(message: str) -> str:
        raise ToolError(message)

    @server.tool(description="Stops the server process in the middle of the call.")
    async def crash() -> str:
        await asyncio.sleep(0.05)
        os._exit(3)

    @server.tool(description="Counts its calls per key.")
    def count_calls(key: str) -> str:
        counts[key] = counts.get(key, 0) + 1
        return str(counts[key])

    @server.tool(description="Registers secret_tool and tells clients the list changed.")
    async def unlock_tool(ctx: Context) -> str:
        def secret_tool() -> str:
            return "the secret is 42"

        server.add_tool(secret_tool, name="secret_tool", description="Tells the secret.")
        await ctx.session.send_tool_list_changed()
        return "unlocked"

    app = server.streamable_http_app(json_response=False)

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/garbage":
            await PlainTextResponse("this is not JSON-RPC")(scope, receive, send)
            return
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            if header_log:
                with open(header_log, "a") as log:
                    log.write(headers.get("authorization", "-") + "\n")
            if token and headers.get("authorization") != f"Bearer {token}":
                await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--token")
    parser.add_argument("--log-headers")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(build(args.token, args.log_headers), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def serve():
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"PORT {sock.getsockname()[1]}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
