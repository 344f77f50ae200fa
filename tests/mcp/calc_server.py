"""A stdio MCP server built with the real `mcp` package, as third-party servers are.

`add` changes nothing but is not annotated read-only (so it needs a grant); `peek` is
annotated `readOnlyHint`. With CALC_PID_FILE set, each start appends its pid there, so
tests can check that wisp leaves no server behind.
"""

from __future__ import annotations

import os

from mcp.types import ToolAnnotations

try:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

server = Server("calc")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def peek() -> str:
    """Report the calculator's state without changing it."""
    return "all quiet"


if __name__ == "__main__":
    pid_file = os.environ.get("CALC_PID_FILE")
    if pid_file:
        with open(pid_file, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
    server.run()
