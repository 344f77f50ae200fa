"""The MCP servers of one run, and the tools they give the model.

Above: print mode (connects everything before `system/init`) and the duplex session
(initialize, `mcp_status`/`mcp_reconnect`/`mcp_toggle`, the tool list of each turn).
Below: one `McpServer` per server: stdio ones wisp starts itself, remote ones it reaches
over HTTP (`type` "http" or "sse"), SDK-hosted ones reached over the control channel
(Python names them in `--mcp-config` as `{"type":"sdk"}`, TypeScript in
`initialize.sdkMcpServers`). In the duplex session stdio and remote servers start in the
background at once; SDK servers connect before the first turn that needs them, so
start-up and the initialize answer stay fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from wisp.jsontypes import JSON
from wisp.mcp.client import McpServer
from wisp.mcp.config import build_server
from wisp.mcp.sdk_bridge import SdkMcpServer, Send
from wisp.rules import Rule
from wisp.tools.base import Tool

if TYPE_CHECKING:
    from wisp.mcp.auth_flow import OAuthFlows



class Elicitor(Protocol):
    """Asks the user what a server's `elicitation/create` wants, and hears when a server
    says a URL-mode one is done."""

    async def __call__(self, server: str, params: JSON) -> JSON: ...

    def completed(self, server: str, elicitation_id: str) -> None: ...

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
        self._configs: dict[str, JSON] = {}  # each server's config as given
        self._named: set[str] = set()  # servers an `mcp_set_servers` call named
        # Who answers a server's elicitation and hears it is done (the runtime's
        # `wisp.runtime.elicitation.Elicitor`); None: it is cancelled.
        self.elicit: Elicitor | None = None
        # The session's folders (cwd first, then added ones), which servers ask for.
        self.roots: Callable[[], list[str]] = lambda: [str(Path(cwd or ".").resolve())]
        self._oauth: OAuthFlows | None = None  # made when a host first authorizes

    def add_configured(self, entries: dict[str, JSON]) -> None:
        """Servers from `--mcp-config` or initialize's `mcpServers`."""
        for name, entry in entries.items():
            self._add(build_server(name, entry, self._send, self._cwd, self._environ), entry)

    def add_sdk(self, names: list[str], manifests: Any) -> None:
        """Servers named in `initialize.sdkMcpServers`, with the manifests TS sends."""
        if self._send is None:
            return
        for name in names:
            manifest = manifests.get(name) if isinstance(manifests, dict) else None
            self._add(SdkMcpServer(name, self._send, manifest=manifest, source="sdk"),
                      {"type": "sdk", "name": name})

    def _add(self, server: McpServer, config: JSON) -> None:
        self.servers[server.name] = server
        self._configs[server.name] = _normalised(config)
        server.on_tools_changed = self._tools_changed
        server.on_elicit = self._ask
        server.on_elicit_done = self._done
        server.roots = self._roots  # late: the runtime names its folders after this

    async def set_servers(self, entries: dict[str, JSON]) -> JSON:
        """`mcp_set_servers`: the servers the host manages at run time (every SDK-hosted
        one, and any an earlier call named) become `entries`, as the reference does it:
        those left out are closed, new or changed ones start and are connected now, the
        same config again changes nothing. Servers from `--mcp-config` stay unless a call
        names them. Answers `{added, removed, errors}` (SDK-hosted servers first)."""
        added: list[str] = []
        async with self._lock:
            removed = _sdk_first([name for name, server in self.servers.items()
                                  if name not in entries and (isinstance(server, SdkMcpServer)
                                                              or name in self._named)],
                                 self.servers)
            for name in removed:
                await self._drop(name)
            fresh: list[McpServer] = []
            for name, entry in entries.items():
                self._named.add(name)
                if name in self.servers and self._configs.get(name) == _normalised(entry):
                    continue
                if name in self.servers:
                    await self._drop(name)
                server = build_server(name, entry, self._send, self._cwd, self._environ)
                self._add(server, entry)
                fresh.append(server)
                added.append(name)
            await asyncio.gather(*(server.connect() for server in fresh
                                   if server.status == "pending"))
        errors = {s.name: s.error or s.status for s in fresh
                  if s.status in ("failed", "needs-auth")}
        return {"added": _sdk_first(added, self.servers), "removed": removed,
                "errors": errors}

    async def _drop(self, name: str) -> None:
        server = self.servers.pop(name)
        self._configs.pop(name, None)
        await server.close()

    @property
    def oauth(self) -> OAuthFlows:
        """The OAuth flows of this session's remote servers (`wisp.mcp.auth_flow`)."""
        if self._oauth is None:
            from wisp.mcp.auth_flow import OAuthFlows

            async def reconnect(server: McpServer) -> None:
                await self.reconnect(server)
                self._tools_changed()

            self._oauth = OAuthFlows(self._environ, reconnect)
        return self._oauth

    async def _ask(self, server: str, params: JSON) -> JSON:
        if self.elicit is None:
            return {"action": "cancel"}
        return await self.elicit(server, params)

    async def roots_changed(self) -> None:
        """Tells the connected servers the folders changed (they may ask again)."""
        for server in list(self.servers.values()):
            if server.status == "connected":
                with contextlib.suppress(Exception):  # a server gone away is no error here
                    await server.send_notification(
                        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})

    def _roots(self) -> list[str]:
        return self.roots()

    def _done(self, server: str, elicitation_id: str) -> None:
        if self.elicit is not None:
            self.elicit.completed(server, elicitation_id)

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
        if self._oauth is not None:
            await self._oauth.aclose()
        await asyncio.gather(*(server.close() for server in self.servers.values()))

    async def remove(self, name: str) -> None:
        """Closes and forgets one server (a plugin's, when a reload dropped the plugin)."""
        async with self._lock:
            if name in self.servers:
                await self._drop(name)

    def tools(self, removed: frozenset[str] = frozenset()) -> list[Tool]:
        """The tools of connected, enabled servers, minus those a bare `--disallowedTools`
        names (`mcp__server` covers the whole server)."""
        rules = [Rule.parse(name) for name in removed if name.startswith("mcp__")]
        return [tool for server in self.servers.values() for tool in server.as_tools()
                if not any(rule.names_tool(tool.name) for rule in rules)]

    def status(self) -> list[JSON]:
        """`mcp_status` rows: servers wisp runs first, then SDK-hosted ones (the
        reference's order)."""
        return [server.status_entry() for server in _sdk_last(self.servers)]

    def sdk_pending(self) -> bool:
        return any(isinstance(s, SdkMcpServer) for s in self._pending(False))

    def init_entries(self) -> list[JSON]:
        """The `mcp_servers` list of `system/init`."""
        return [
            {"name": s.name, "status": s.status if s.enabled else "disabled", "source": s.source}
            for s in self.servers.values()
        ]


def _normalised(config: JSON) -> JSON:
    """A config as compared between calls: no `type` means stdio."""
    return {**config, "type": config.get("type") or "stdio"}


def _sdk_last(servers: dict[str, McpServer]) -> list[McpServer]:
    return sorted(servers.values(), key=lambda s: isinstance(s, SdkMcpServer))


def _sdk_first(names: list[str], servers: dict[str, McpServer]) -> list[str]:
    return sorted(names, key=lambda n: not isinstance(servers.get(n), SdkMcpServer))
