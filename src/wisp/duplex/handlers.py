"""Typed handlers for the control requests the SDKs send.

Above: the dispatcher, which routes by subtype, checks each request against its
`RequestType` (`wisp.wire.protocol`) and does the wire work. Each handler takes its
request's TypedDict and returns the response body (None for an empty success); raising
`ControlError` gives an error response with its `error_code`.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

from wisp import PROTOCOL_VERSION, __version__
from wisp.control.dispatcher import Envelope
from wisp.duplex.initialize import apply_initialize, initialize_response, reapply_initialize
from wisp.errors import ControlError
from wisp.jsontypes import JSON
from wisp.launch.startup import BYPASS, bypass_refusal
from wisp.mcp.client import McpServer
from wisp.permissions.modes import PermissionMode, is_permission_mode
from wisp.wire import protocol as p

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

# How long `mcp_status` waits for SDK-hosted servers it starts connecting.
SDK_STATUS_WAIT_S = 3.0


def register_handlers(server: DuplexServer) -> None:
    h = Handlers(server)
    on = server.dispatcher.on
    on(p.INITIALIZE, h.initialize)
    on(p.INTERRUPT, h.interrupt)
    on(p.SET_PERMISSION_MODE, h.set_permission_mode)
    on(p.SET_MODEL, h.set_model)
    on(p.SET_MAX_THINKING_TOKENS, h.set_max_thinking_tokens)
    on(p.MCP_STATUS, h.mcp_status)
    on(p.MCP_RECONNECT, h.mcp_reconnect)
    on(p.MCP_TOGGLE, h.mcp_toggle)
    on(p.STOP_TASK, h.stop_task)
    on(p.REWIND_FILES, h.rewind_files)
    on(p.GET_CONTEXT_USAGE, h.get_context_usage)
    on(p.GET_SETTINGS, h.get_settings)
    on(p.APPLY_FLAG_SETTINGS, h.apply_flag_settings)
    on(p.RENAME_SESSION, h.rename_session)
    from wisp.duplex.queries import register_queries
    from wisp.duplex.session_requests import register_session_requests
    from wisp.duplex.workspace import register_workspace

    register_queries(server)
    register_workspace(server)
    register_session_requests(server)


class Handlers:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server
        self._connecting: set[asyncio.Future[None]] = set()  # held: the loop's refs are weak

    async def initialize(self, request: p.Initialize) -> JSON | Envelope:
        """The first applies the host's config; a later one (a host attaching again) does
        not apply it twice, and its answer carries the permission requests still waiting
        for an answer, which the SDKs deliver to the new host's callback."""
        server = self.server
        again = server.initialized
        server.initialized = True
        try:
            applied = await (reapply_initialize(server, request) if again
                             else apply_initialize(server, request))
        finally:
            server.ready.set()  # prompts queued behind initialize may run now
        answer = initialize_response(server, applied)
        pending = server.dispatcher.unanswered("can_use_tool") if again else []
        return Envelope(answer, {"pending_permission_requests": pending}) if pending else answer

    async def interrupt(self, request: p.Interrupt) -> JSON:
        return self.server.interrupt(cancel_queued=request.get("cancel_queued") is True)

    async def set_permission_mode(self, request: p.SetPermissionMode) -> JSON:
        return {"mode": self._set_mode(request["mode"])}

    def _set_mode(self, mode: object) -> PermissionMode:
        server = self.server
        if not is_permission_mode(mode):
            raise p.bad_permission_mode()
        if mode == BYPASS:
            # Only a launch flag opens bypass (and as root, IS_SANDBOX=1 besides).
            refusal = bypass_refusal(server.opts.runtime.bypass_allowed, server.runtime.base_env)
            if refusal is not None:
                raise ControlError(*refusal)
        # The runtime stores the mode on the policy and reports it right after this answer.
        server.runtime.set_permission_mode(mode)
        return mode

    async def set_model(self, request: p.SetModel) -> JSON:
        return {"model": self._set_model(request.get("model"))}

    def _set_model(self, model: str | None) -> str:
        return self.server.runtime.set_model(model)  # a bad spec: an error answer

    async def set_max_thinking_tokens(self, request: p.SetMaxThinkingTokens) -> None:
        """An absent `max_thinking_tokens` leaves the budget; `thinking_display` (when
        sent) replaces the display, null restoring the default."""
        if "max_thinking_tokens" in request:
            self.server.runtime.set_max_thinking_tokens(request.get("max_thinking_tokens"))
        if "thinking_display" in request:
            display = request.get("thinking_display")
            self.server.runtime.set_thinking_display(
                display if isinstance(display, str) else None)

    async def mcp_status(self, request: p.McpStatus) -> JSON:
        """Each server's real state: SDK-hosted servers not yet asked are connected first
        (their host answers while we wait, for a few seconds at most: a server still
        connecting then reads "pending"), servers still starting are waited for."""
        server = self.server
        if server.mcp.sdk_pending() and not server.dispatcher.closed:
            connecting = asyncio.ensure_future(server.connect_mcp())
            self._connecting.add(connecting)
            connecting.add_done_callback(self._connecting.discard)
            await asyncio.wait({connecting}, timeout=SDK_STATUS_WAIT_S)
        else:
            await server.mcp.settle()
        return {"mcpServers": server.mcp.status()}

    async def mcp_reconnect(self, request: p.McpReconnect) -> JSON:
        found = self._mcp_server(request.get("serverName") or request.get("server_name"))
        await self.server.mcp.reconnect(found)
        self.server.refresh_tools()
        _raise_if_failed(found)  # the SDKs document an error when reconnecting fails
        return {}

    async def mcp_toggle(self, request: p.McpToggle) -> JSON:
        found = self._mcp_server(request.get("serverName") or request.get("server_name"))
        await self.server.mcp.set_enabled(found, request.get("enabled", True))
        self.server.refresh_tools()
        _raise_if_failed(found)
        return {}

    async def stop_task(self, request: p.StopTask) -> JSON:
        """Ends a running task and everything it started; an unknown or finished task is
        no error (the reference answers `{}` either way)."""
        self.server.runtime.tasks.stop(request["task_id"])
        return {}

    async def rewind_files(self, request: p.RewindFiles) -> JSON:
        dry_run = request.get("dry_run") is True
        answer = self.server.runtime.rewind_files(request["user_message_id"], dry_run)
        if not answer["canRewind"] and not dry_run:
            raise ControlError(str(answer["error"]))  # the reference's error, as an error
        return answer

    async def get_context_usage(self, request: p.GetContextUsage) -> JSON:
        return self.server.runtime.context_usage()

    async def get_settings(self, request: p.GetSettings) -> JSON:
        return server_settings(self.server)

    async def apply_flag_settings(self, request: p.ApplyFlagSettings) -> JSON:
        settings = request["settings"]
        if isinstance(settings.get("model"), str):
            self._set_model(settings["model"])
        if isinstance(settings.get("permissionMode"), str):
            self._set_mode(settings["permissionMode"])
        self.server.flag_settings.update(settings)
        return {}

    async def rename_session(self, request: p.RenameSession) -> JSON | None:
        """Renames the session in its transcript (`custom-title` and `agent-name` lines, as
        the reference writes and the SDKs' listings read), with the reference's phrases for
        what it refuses, and its empty success."""
        title = request["title"]
        if not isinstance(title, str):
            raise ControlError("rename_session: title must be a string")
        title = title.strip()
        if not title:
            raise ControlError("title must be non-empty")
        named = dict(request).get("session_id")
        if isinstance(named, str) and named and named != self.server.session.session_id:
            raise ControlError("session_id is not the current session")
        self.server.title = title
        self.server.runtime.rename(title)
        return None

    def _mcp_server(self, name: str | None) -> McpServer:
        found = self.server.mcp.get(str(name))
        if found is None:
            raise ControlError(f"MCP server not found: {name}", "not_found")
        return found


def _raise_if_failed(server: McpServer) -> None:
    if server.enabled and server.status in ("failed", "needs-auth"):
        raise ControlError(f"Failed to connect to MCP server {server.name}: {server.error}")


def server_settings(server: DuplexServer) -> JSON:
    policy = server.tool_state.policy
    effective = {
        "model": server.session.model,
        "permissionMode": policy.mode,
        "permissions": {
            "allow": [str(r) for r in policy.allow],
            "deny": [str(r) for r in policy.deny],
            "ask": [str(r) for r in policy.ask],
        },
        **server.flag_settings,
    }
    return {
        "effective": json.loads(json.dumps(effective)),
        "sources": server.settings_sources,
        "errors": server.settings_errors,
        "wisp_version": __version__,
        "claude_code_version": PROTOCOL_VERSION,
    }
