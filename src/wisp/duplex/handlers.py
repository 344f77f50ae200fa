"""Typed handlers for the control requests the SDKs send (cli-behaviour §5).

Above: the dispatcher, which routes by subtype and does the wire work. Each handler takes
the request object and returns the response body (None for an empty success); raising
`ControlError` gives an error response with its `error_code`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from wisp import PROTOCOL_VERSION, __version__
from wisp.cli.options import PERMISSION_MODES
from wisp.cli.startup import BYPASS, bypass_refusal
from wisp.control.dispatcher import ControlError
from wisp.duplex.initialize import apply_initialize, initialize_response
from wisp.mcp.client import McpServer
from wisp.models import catalog
from wisp.wire import frames

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

JSON = dict[str, Any]


def register_handlers(server: DuplexServer) -> None:
    handlers = Handlers(server)
    for subtype, handler in handlers.table().items():
        server.dispatcher.register(subtype, handler)


class Handlers:
    def __init__(self, server: DuplexServer) -> None:
        self.server = server

    def table(self) -> dict[str, Callable[[JSON], Awaitable[JSON | None]]]:
        return {
            "initialize": self.initialize,
            "interrupt": self.interrupt,
            "set_permission_mode": self.set_permission_mode,
            "set_model": self.set_model,
            "set_max_thinking_tokens": self.set_max_thinking_tokens,
            "mcp_status": self.mcp_status,
            "mcp_reconnect": self.mcp_reconnect,
            "mcp_toggle": self.mcp_toggle,
            "stop_task": self.stop_task,
            "rewind_files": self.rewind_files,
            "get_context_usage": self.get_context_usage,
            "get_settings": self.get_settings,
            "apply_flag_settings": self.apply_flag_settings,
            "rename_session": self.rename_session,
        }

    async def initialize(self, request: JSON) -> JSON:
        try:
            applied = await apply_initialize(self.server, request)
        finally:
            self.server.ready.set()  # prompts queued behind initialize may run now
        return initialize_response(self.server, applied)

    async def interrupt(self, request: JSON) -> JSON:
        return self.server.interrupt(cancel_queued=request.get("cancel_queued") is True)

    async def set_permission_mode(self, request: JSON) -> JSON:
        server = self.server
        mode = request.get("mode")
        if not isinstance(mode, str) or mode not in PERMISSION_MODES:
            raise ControlError(
                "Cannot set permission mode: must be one of " + ", ".join(PERMISSION_MODES),
                "invalid_mode",
            )
        if mode == BYPASS:
            # Only a launch flag opens bypass (and as root, IS_SANDBOX=1 besides).
            refusal = bypass_refusal(server.opts.bypass_allowed, server.env)
            if refusal is not None:
                raise ControlError(*refusal)
        server.tool_state.policy.mode = server.session.permission_mode = mode
        # The reference reports the change right after its answer.
        status = frames.system(
            "status", server.session.session_id, status=None, permissionMode=mode
        )
        asyncio.get_running_loop().call_soon(server.sink.write, status)
        return {"mode": mode}

    async def set_model(self, request: JSON) -> JSON:
        raw = request.get("model")
        session = self.server.session
        session.model = catalog.resolve_model(
            raw if isinstance(raw, str) else None, self.server.env
        )
        return {"model": session.model}

    async def set_max_thinking_tokens(self, request: JSON) -> None:
        tokens = request.get("max_thinking_tokens")
        self.server.ctx.config.thinking = (
            {"type": "enabled", "budget_tokens": tokens}
            if isinstance(tokens, int) and tokens > 0
            else None
        )

    async def mcp_status(self, request: JSON) -> JSON:
        await self.server.mcp.settle()  # servers still starting: answer with their outcome
        return {"mcpServers": self.server.mcp.status()}

    async def mcp_reconnect(self, request: JSON) -> JSON:
        found = self._mcp_server(request)
        await self.server.mcp.reconnect(found)
        self.server.refresh_tools()
        _raise_if_failed(found)  # the SDKs document an error when reconnecting fails
        return {}

    async def mcp_toggle(self, request: JSON) -> JSON:
        found = self._mcp_server(request)
        await self.server.mcp.set_enabled(found, bool(request.get("enabled", True)))
        self.server.refresh_tools()
        _raise_if_failed(found)
        return {}

    async def stop_task(self, request: JSON) -> JSON:
        return {}  # wisp runs no background tasks yet, so there is nothing to stop

    async def rewind_files(self, request: JSON) -> JSON:
        raise ControlError(
            "File checkpointing is not available in wisp yet, so there is nothing to rewind.",
            "unsupported_request",
        )

    async def get_context_usage(self, request: JSON) -> JSON:
        from wisp.duplex.context_usage import context_usage

        return context_usage(self.server)

    async def get_settings(self, request: JSON) -> JSON:
        return server_settings(self.server)

    async def apply_flag_settings(self, request: JSON) -> JSON:
        settings = request.get("settings")
        if not isinstance(settings, dict):
            raise ControlError("apply_flag_settings needs a settings object")
        if isinstance(settings.get("model"), str):
            await self.set_model({"model": settings["model"]})
        if isinstance(settings.get("permissionMode"), str):
            await self.set_permission_mode({"mode": settings["permissionMode"]})
        self.server.flag_settings.update(settings)
        return {}

    async def rename_session(self, request: JSON) -> JSON:
        title = request.get("title")
        self.server.title = str(title) if title is not None else None
        return {"title": self.server.title}

    def _mcp_server(self, request: JSON) -> McpServer:
        name = request.get("serverName") or request.get("server_name")
        found = self.server.mcp.get(str(name))
        if found is None:
            raise ControlError(f"MCP server not found: {name}", "not_found")
        return found


def _raise_if_failed(server: McpServer) -> None:
    if server.enabled and server.status == "failed":
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
