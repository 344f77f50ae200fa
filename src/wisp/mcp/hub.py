"""The MCP servers of one run, and the tools they give the model.

Above: print mode (connects everything before `system/init`) and the duplex session
(initialize, `mcp_status`/`mcp_reconnect`/`mcp_toggle`, the tool list of each turn).
Below: one `McpServer` per server: stdio ones wisp starts itself, SDK-hosted ones reached
over the control channel (Python names them in `--mcp-config` as `{"type":"sdk"}`,
TypeScript in `initialize.sdkMcpServers`). In the duplex session stdio servers start in
the background at once; SDK servers connect before the first turn that needs them, so
start-up and the initialize answer stay fast.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from wisp.mcp.client import McpServer
from wisp.mcp.config import build_server
from wisp.mcp.sdk_bridge import SdkMcpServer, Send
from wisp.permissions.rules import Rule
from wisp.tools.base import Tool

JSON = dict[str, Any]


class McpHub:
    def __init__(self, send: Send | None, cwd: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self._send = send  # None: no control channel (print mode)
        self._cwd = cwd
        self._environ = os.environ if environ is None else environ
        self.servers: dict[str, McpServer] = {}
        # Told when a server's tools changed on their own (tools/list_changed).
        self.on_tools_changed: Callable[[], None] | None = None
        self._lock = asyncio.Lock()

    def add_configured(self, entries: dict[str, JSON]) -> None:
        """Servers from `--mcp-config` or initialize's `mcpServers`."""
        for name, entry in entries.items():
            self._add(build_server(name, entry, self._send, self._cwd, self._environ))

    def add_sdk(self, names: list[str], manifests: Any) -> None:
        """Servers named in `initialize.sdkMcpServers`, with the manifests TS sends."""
        if self._send is None:
            return
        for name in names:
            manifest = manifests.get(name) if isinstance(manifests, dict) else None
            self._add(SdkMcpServer(name, self._send, manifest=manifest, source="sdk"))

    def _add(self, server: McpServer) -> None:
        self.servers[server.name] = server
        server.on_tools_changed = self._tools_changed

    def _tools_changed(self) -> None:
        if self.on_tools_changed is not None:
            self.on_tools_changed()

    def get(self, name: str) -> McpServer | None:
        return self.servers.get(name)

    def has_pending(self, local_only: bool = False) -> bool:
        return bool(self._pending(local_only))

    def _pending(self, local_only: bool) -> list[McpServer]:
        return [s for s in self.servers.values() if s.status == "pending" and s.enabled
                and not (local_only and isinstance(s, SdkMcpServer))]

    async def connect_pending(self, local_only: bool = False) -> bool:
        """Connects every server still pending (with `local_only`, not the SDK-hosted
        ones), all at once. Returns whether any changed state."""
        async with self._lock:
            pending = self._pending(local_only)
            await asyncio.gather(*(server.connect() for server in pending))
            return bool(pending)

    async def settle(self) -> None:
        """Waits for connections in progress, so a status read after it is final."""
        async with self._lock:
            return

    async def reconnect(self, server: McpServer) -> None:
        async with self._lock:  # not while a connection of it is in progress
            await server.reset()
        await self.connect_pending()

    async def set_enabled(self, server: McpServer, enabled: bool) -> None:
        """As in Claude Code, disabling disconnects (a stdio server's process ends) and
        enabling connects again."""
        server.enabled = enabled
        if not enabled:
            async with self._lock:
                await server.reset()
        elif server.status != "connected":
            await self.reconnect(server)

    async def close(self) -> None:
        await asyncio.gather(*(server.close() for server in self.servers.values()))

    def tools(self, removed: frozenset[str] = frozenset()) -> list[Tool]:
        """The tools of connected, enabled servers, minus those a bare `--disallowedTools`
        names (`mcp__server` covers the whole server)."""
        rules = [Rule.parse(name) for name in removed if name.startswith("mcp__")]
        return [tool for server in self.servers.values() for tool in server.as_tools()
                if not any(rule.names_tool(tool.name) for rule in rules)]

    def status(self) -> list[JSON]:
        return [server.status_entry() for server in self.servers.values()]

    def init_entries(self) -> list[JSON]:
        """The `mcp_servers` list of `system/init`."""
        return [
            {"name": s.name, "status": s.status if s.enabled else "disabled", "source": s.source}
            for s in self.servers.values()
        ]
