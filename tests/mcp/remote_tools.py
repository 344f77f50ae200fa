"""The remote test server's tools, on the real `mcp` package (imported here, at the top,
since its tool decorator reads the annotations: `remote_servers` imports this lazily, so
collecting the tests does not need `mcp`)."""

import anyio
from mcp.server.mcpserver import Context, MCPServer


def build(kind: str, json_response: bool = False):
    """The streamable HTTP app (at /mcp) or the SSE app (at /sse)."""
    server = MCPServer("remote", version="1.2.3")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def echo_header(name: str, ctx: Context) -> str:
        """The value of one header of this request."""
        headers = ctx.headers or {}
        return f"{name}={headers.get(name, '<none>')}"

    @server.tool()
    async def wait(seconds: float) -> str:
        """Sleep, then say so."""
        await anyio.sleep(seconds)
        return "waited"

    if kind == "http":
        return server.streamable_http_app(json_response=json_response)
    return server.sse_app()
