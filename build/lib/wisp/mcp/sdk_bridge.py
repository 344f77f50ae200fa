"""MCP servers that live in the SDK process, reached with `mcp_message` control requests.

The Python SDK needs the full handshake (initialize → notifications/initialized →
tools/list) before `tools/call`; the TypeScript SDK has already run it and sends manifests
in `initialize`, which we use when present. The protocol itself is `McpServer`'s; this is
only the transport.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from wisp.mcp.client import McpServer
from wisp.tools.base import JSON

Send = Callable[[str, JSON], Awaitable[JSON]]


class SdkMcpServer(McpServer):
    def __init__(self, name: str, send: Send, manifest: JSON | None = None,
                 source: str = "sdk") -> None:
        super().__init__(name, source)
        self.send = send
        self.manifest = manifest

    async def exchange(self, message: JSON, timeout: float | None) -> JSON:
        # No timeout of our own: the host's server answers (or errors) on its own terms,
        # and an interrupt cancels the wait.
        reply = await self.send(self.name, message)
        response = reply.get("mcp_response", reply)
        return response if isinstance(response, dict) else {}

    async def send_notification(self, message: JSON) -> None:
        await self.send(self.name, message)

    async def handshake(self) -> None:
        listed = (self.manifest or {}).get("toolsListResult")
        if not isinstance(listed, dict) or not listed:
            await super().handshake()
            return
        info = (self.manifest or {}).get("initializeResult") or {}
        self.server_info = info.get("serverInfo") if isinstance(info, dict) else None
        self.tools = [t for t in listed.get("tools") or [] if isinstance(t, dict)]

    def config_entry(self) -> JSON:
        return {"type": "sdk", "name": self.name}
