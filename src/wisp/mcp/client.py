"""The MCP client protocol, independent of how messages travel.

Above: the hub (or print mode), which connects servers and offers their tools. Below: a
transport subclass, which moves one JSON-RPC message at a time: `SdkMcpServer` over the
SDK's control channel (`mcp_message`), `StdioMcpServer` over a child process's pipes,
`HttpMcpServer` and `SseMcpServer` over HTTP (`wisp.mcp.remote`).
Here: the handshake (initialize → notifications/initialized → tools/list), status for
`mcp_status` and `system/init`, and each server tool as a wisp tool `mcp__<server>__<tool>`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from wisp import __version__
from wisp.errors import McpError, McpTimeout
from wisp.jsontypes import JSON
from wisp.tools.base import Tool, ToolContext, ToolKind, ToolResult

__all__ = ["JSON", "PROTOCOL", "McpAuthRequired", "McpError", "McpServer", "McpTool",
           "mcp_tool_name", "timeout_s"]

# (server name, the elicitation's params) → the user's answer: {action, content?}
Elicit = Callable[[str, JSON], Awaitable[JSON]]
# (server name, elicitation id): the server says a URL-mode elicitation is done.
ElicitDone = Callable[[str, str], None]
PROTOCOL = "2025-06-18"
# A server that pages its tool list forever must not hang the handshake.
_MAX_LIST_PAGES = 50
# The Messages API takes tool names of [a-zA-Z0-9_-] only; Claude Code maps the rest to _.
_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_-]")
# Claude Code's variables: MCP_TIMEOUT bounds each start-up request, MCP_TOOL_TIMEOUT one
# tools/call. Claude Code waits ~28 h for a call by default, in effect until interrupted:
# a server that never answers would hold a headless run that long. wisp waits as long as
# the longest Bash command may run (10 min); a longer tool needs MCP_TOOL_TIMEOUT.
DEFAULT_STARTUP_MS = 30_000
DEFAULT_TOOL_MS = 600_000


def timeout_s(environ: Mapping[str, str], key: str, default_ms: int) -> float:
    try:
        value = int(environ.get(key, ""))
    except ValueError:
        value = default_ms
    return (value if value > 0 else default_ms) / 1000


class McpAuthRequired(McpError):
    """The server wants a credential wisp does not have (an HTTP 401): its status becomes
    "needs-auth" rather than "failed". `challenge` is its `WWW-Authenticate`."""

    def __init__(self, message: str, challenge: str | None = None) -> None:
        super().__init__(message)
        self.challenge = challenge


class McpServer:
    """One configured server as wisp sees it. Subclasses implement `exchange` (send a
    request, return the JSON-RPC response) and `send_notification`; `open`/`close`
    bracket a connection where the transport has one."""

    # Only the SDK bridge has no timeouts of its own; stdio and remote servers set theirs
    # from the environment (MCP_TIMEOUT, MCP_TOOL_TIMEOUT).
    startup_timeout: float | None = None
    tool_timeout: float | None = None

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source
        self.status = "pending"
        self.error: str | None = None
        self.server_info: JSON | None = None
        self.tools: list[JSON] = []
        self.enabled = True
        # Called when the server's tool list changed after the handshake.
        self.on_tools_changed: Callable[[], None] | None = None
        self.auth_challenge: str | None = None  # a 401's WWW-Authenticate (wisp.mcp.oauth)
        # Asks the user what an `elicitation/create` wants (the hub's; None: cancel).
        self.on_elicit: Elicit | None = None
        self.on_elicit_done: ElicitDone | None = None
        # The folders the session works in, for `roots/list` (the hub's: cwd, added dirs).
        self.roots: Callable[[], list[str]] | None = None
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak refs

    # Transport -------------------------------------------------------------------------

    async def exchange(self, message: JSON, timeout: float | None) -> JSON:
        raise NotImplementedError

    async def send_notification(self, message: JSON) -> None:
        raise NotImplementedError

    async def open(self) -> None:
        """Starts the transport (a process, say). Raises McpError when it can't."""

    async def close(self) -> None:
        """Ends the transport; a no-op when there is none or it has ended."""

    def config_entry(self) -> JSON:
        return {"type": self.source}

    # Protocol --------------------------------------------------------------------------

    async def rpc(self, method: str, params: JSON | None = None,
                  timeout: float | None = None) -> JSON:
        message: JSON = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        response = await self.exchange(message, timeout)
        if "error" in response:
            error = response["error"]
            raise McpError(error.get("message") if isinstance(error, dict) else str(error))
        result = response.get("result")
        return result if isinstance(result, dict) else {}

    async def connect(self) -> None:
        """pending → connected, failed, or needs-auth (a remote server that wants a
        credential). A broken server is reported, never fatal."""
        try:
            await self.open()
            await self.handshake()
            self.status = "connected"
        except Exception as exc:
            self.status = "needs-auth" if isinstance(exc, McpAuthRequired) else "failed"
            self.auth_challenge = exc.challenge if isinstance(exc, McpAuthRequired) else None
            self.error = str(exc) or type(exc).__name__
            await self.close()

    async def handshake(self) -> None:
        init = await self.rpc(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                # Servers may ask the user mid-call (forms; URLs by `mode`).
                "capabilities": {"roots": {"listChanged": True},
                                 "elicitation": {"form": {}, "url": {}}},
                "clientInfo": {"name": "wisp", "version": __version__},
            },
            self.startup_timeout,
        )
        info = init.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else None
        await self.send_notification({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools = await self.list_tools()

    async def list_tools(self) -> list[JSON]:
        tools: list[JSON] = []
        cursor: Any = None
        for _ in range(_MAX_LIST_PAGES):
            listed = await self.rpc("tools/list", {"cursor": cursor} if cursor else {},
                                    self.startup_timeout)
            tools += [t for t in listed.get("tools") or [] if isinstance(t, dict)]
            cursor = listed.get("nextCursor")
            if not cursor:
                break
        return tools

    async def call_tool(self, name: str, arguments: JSON) -> JSON:
        try:
            return await self.rpc("tools/call", {"name": name, "arguments": arguments},
                                  self.tool_timeout)
        except McpTimeout as exc:
            raise McpTimeout(f"{exc} (MCP_TOOL_TIMEOUT, in ms, allows longer)") from None

    async def reset(self) -> None:
        """Back to pending (for `mcp_reconnect`): the next connect starts afresh."""
        await self.close()
        self.status, self.error, self.server_info, self.tools = "pending", None, None, []

    async def requested(self, method: str, params: Any) -> JSON | None:
        """A request from the server: its roots (the session's folders, as the reference
        lists them: a `file://` uri each), or an elicitation, which goes to the user
        (cancelled when no one can answer); anything else is not served (None)."""
        if method == "roots/list":
            folders = self.roots() if self.roots is not None else []
            return {"roots": [{"uri": Path(folder).as_uri()} for folder in folders]}
        if method != "elicitation/create":
            return None
        if self.on_elicit is None or not isinstance(params, dict):
            return {"action": "cancel"}  # nobody to ask, as the reference answers
        return await self.on_elicit(self.name, params)

    def notified(self, method: str, params: Any) -> None:
        """A notification from the server: a changed tool list, or a URL-mode elicitation
        the user finished (`notifications/elicitation/complete`)."""
        done = params.get("elicitationId") if isinstance(params, dict) else None
        if method == "notifications/elicitation/complete" and isinstance(done, str):
            if self.on_elicit_done is not None:
                self.on_elicit_done(self.name, done)
        elif method == "notifications/tools/list_changed" and self.status == "connected":
            task = asyncio.ensure_future(self._relist())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _relist(self) -> None:
        try:
            self.tools = await self.list_tools()
        except Exception:
            return  # keep the tools we had; a call to a vanished one fails on its own
        if self.on_tools_changed is not None:
            self.on_tools_changed()

    # What wisp shows -------------------------------------------------------------------

    def as_tools(self) -> list[Tool]:
        if not self.enabled or self.status != "connected":
            return []
        return [McpTool(self, spec) for spec in self.tools]

    @property
    def transport(self) -> str:
        return str(self.config_entry().get("type") or self.source)

    def status_entry(self) -> JSON:
        """One `mcp_status` row, in the reference's shape: an SDK-hosted server's config
        stays with its host; tools are listed once the server has said what they are."""
        entry: JSON = {"name": self.name, "status": self.status if self.enabled else "disabled"}
        if self.server_info:
            entry["serverInfo"] = self.server_info
        if self.error:
            entry["error"] = self.error
        sdk = self.transport == "sdk"
        if not sdk:
            entry["config"] = self.config_entry()
        entry.update(transport=self.transport, scope="dynamic", source="sdk" if sdk else "dynamic")
        if self.status == "connected":
            entry["tools"] = [{"name": t.get("name"), "annotations": _annotations(t)}
                              for t in self.tools]
        return entry


class McpTool(Tool):
    """One tool of an MCP server. Tool's class attributes become per-instance here,
    since every server brings its own tools."""

    kind: ClassVar[ToolKind] = "execute"

    def __init__(self, server: McpServer, spec: JSON) -> None:
        self.server = server
        self.tool_name = str(spec.get("name"))
        self.name = mcp_tool_name(server.name, self.tool_name)  # type: ignore[misc]
        self.description = str(spec.get("description") or "")  # type: ignore[misc]
        schema = spec.get("inputSchema")
        self.input_schema = schema if isinstance(schema, dict) else {"type": "object"}  # type: ignore[misc]
        annotations = spec.get("annotations") or {}
        self.read_only = (
            bool(annotations.get("readOnlyHint")) if isinstance(annotations, dict) else False
        )

    def is_read_only(self, tool_input: JSON) -> bool:
        return self.read_only

    async def run(self, tool_input: JSON, ctx: ToolContext) -> ToolResult:
        try:
            result = await self.server.call_tool(self.tool_name, tool_input)
        except Exception as exc:
            return ToolResult.error(f"MCP tool {self.name} failed: {exc}")
        from wisp.mcp.results import tool_result

        return tool_result(self.name, result, os.environ if ctx.env is None else ctx.env)


_HINTS = {"readOnlyHint": "readOnly", "destructiveHint": "destructive",
          "openWorldHint": "openWorld", "idempotentHint": "idempotent"}


def _annotations(spec: JSON) -> JSON:
    """A tool's MCP annotations as `mcp_status` names them (`readOnlyHint` → `readOnly`)."""
    given = spec.get("annotations")
    if not isinstance(given, dict):
        return {}
    return {name: given[hint] for hint, name in _HINTS.items() if isinstance(given.get(hint), bool)}


def mcp_tool_name(server: str, tool: str) -> str:
    return f"mcp__{_NOT_IN_NAME.sub('_', server)}__{_NOT_IN_NAME.sub('_', tool)}"
