"""The MCP servers of one duplex session, and the tools they give the model.

Above: the duplex session (initialize, `mcp_status`/`mcp_reconnect`/`mcp_toggle`, and the
tool list of each turn). Below: one `SdkMcpServer` per server. Python names its
in-process servers in `--mcp-config` (`{"type":"sdk"}`); TypeScript names them in
`initialize.sdkMcpServers`. Servers connect lazily, before the first turn that needs their
tools, so start-up and the initialize answer stay fast.
"""

from __future__ import annotations

import asyncio
from typing import Any

from wisp.mcp.sdk_bridge import SdkMcpServer, Send
from wisp.tools.base import Tool

JSON = dict[str, Any]
UNSUPPORTED = "only SDK-hosted MCP servers are supported so far"


class McpHub:
    def __init__(self, send: Send) -> None:
        self._send = send
        self.servers: dict[str, SdkMcpServer] = {}
        self._lock = asyncio.Lock()

    def add_configured(self, entries: dict[str, JSON]) -> None:
        """Servers from `--mcp-config`; only `type: "sdk"` ones can be reached."""
        for name, entry in entries.items():
            server = SdkMcpServer(name, self._send, source="sdk")
            if entry.get("type") != "sdk":
                server.status, server.error = "failed", UNSUPPORTED
                server.source = str(entry.get("type") or "stdio")
            self.servers[name] = server

    def add_sdk(self, names: list[str], manifests: Any) -> None:
        """Servers named in `initialize.sdkMcpServers`, with the manifests TS sends."""
        for name in names:
            manifest = manifests.get(name) if isinstance(manifests, dict) else None
            self.servers[name] = SdkMcpServer(name, self._send, manifest=manifest, source="sdk")

    def get(self, name: str) -> SdkMcpServer | None:
        return self.servers.get(name)

    async def connect_pending(self) -> bool:
        """Connects every server still pending. Returns whether any changed state."""
        async with self._lock:
            pending = [s for s in self.servers.values() if s.status == "pending"]
            for server in pending:
                await server.connect()
            return bool(pending)

    def tools(self) -> list[Tool]:
        return [tool for server in self.servers.values() for tool in server.as_tools()]

    def status(self) -> list[JSON]:
        return [server.status_entry() for server in self.servers.values()]

    def init_entries(self) -> list[JSON]:
        """The `mcp_servers` list of `system/init`."""
        return [
            {"name": s.name, "status": s.status if s.enabled else "disabled", "source": s.source}
            for s in self.servers.values()
        ]
