"""Typed handlers for the control requests the SDKs send. Each takes the request object
and returns the response body (or None for an empty success); raising `ControlError`
gives an error response. The dispatcher does the wire work."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from wisp import PROTOCOL_VERSION, __version__
from wisp.cli.options import PERMISSION_MODES
from wisp.control.dispatcher import ControlError
from wisp.duplex.initialize import apply_initialize, initialize_response
from wisp.models import catalog

if TYPE_CHECKING:
    from wisp.duplex.server import DuplexServer

JSON = dict[str, Any]


def register_handlers(server: DuplexServer) -> None:
    d = server.dispatcher

    async def initialize(request: JSON) -> JSON:
        try:
            applied = await apply_initialize(server, request)
        finally:
            server.ready.set()
        return initialize_response(server, applied)

    async def interrupt(request: JSON) -> JSON:
        server.interrupt()
        return {"still_queued": []}

    async def set_permission_mode(request: JSON) -> JSON:
        mode = request.get("mode")
        if mode not in PERMISSION_MODES:
            raise ControlError("Cannot set permission mode: must be one of "
                               + ", ".join(PERMISSION_MODES), "invalid_mode")
        if mode == "bypassPermissions" and os.geteuid() == 0 and \
                server.env.get("IS_SANDBOX") != "1":
            raise ControlError("bypassPermissions cannot be used with root/sudo privileges "
                               "unless IS_SANDBOX=1", "invalid_mode")
        server.tool_state.policy.mode = server.session.permission_mode = str(mode)
        server.sink.write({"type": "system", "subtype": "status", "status": None,
                           "permissionMode": mode, "session_id": server.session.session_id})
        return {"mode": mode}

    async def set_model(request: JSON) -> JSON:
        raw = request.get("model")
        server.session.model = catalog.resolve_model(raw if isinstance(raw, str) else None,
                                                     server.env)
        return {"model": server.session.model}

    async def set_max_thinking_tokens(request: JSON) -> None:
        tokens = request.get("max_thinking_tokens")
        server.ctx.config.thinking = ({"type": "enabled", "budget_tokens": int(tokens)}
                                      if isinstance(tokens, int) and tokens > 0 else None)

    async def mcp_status(request: JSON) -> JSON:
        return {"mcpServers": [s.status_entry() for s in server.mcp_servers.values()]}

    async def mcp_reconnect(request: JSON) -> JSON:
        found = _mcp_server(server, request)
        found.status = "pending"
        await found.connect()
        server.refresh_tools()
        return {}

    async def mcp_toggle(request: JSON) -> JSON:
        found = _mcp_server(server, request)
        found.enabled = bool(request.get("enabled", True))
        server.refresh_tools()
        return {}

    async def stop_task(request: JSON) -> JSON:
        return {}  # wisp runs no background tasks yet, so there is nothing to stop

    async def rewind_files(request: JSON) -> JSON:
        raise ControlError("File checkpointing is not available in wisp yet, so there is "
                           "nothing to rewind.", "unsupported_request")

    async def get_context_usage(request: JSON) -> JSON:
        from wisp.duplex.context_usage import context_usage

        return context_usage(server)

    async def get_settings(request: JSON) -> JSON:
        return server_settings(server)

    async def apply_flag_settings(request: JSON) -> JSON:
        settings = request.get("settings")
        if not isinstance(settings, dict):
            raise ControlError("apply_flag_settings needs a settings object")
        if isinstance(settings.get("model"), str):
            await set_model({"model": settings["model"]})
        if isinstance(settings.get("permissionMode"), str):
            await set_permission_mode({"mode": settings["permissionMode"]})
        server.flag_settings.update(settings)
        return {}

    async def rename_session(request: JSON) -> JSON:
        title = request.get("title")
        server.title = str(title) if title is not None else None
        return {"title": server.title}

    handlers = {
        "initialize": initialize, "interrupt": interrupt,
        "set_permission_mode": set_permission_mode, "set_model": set_model,
        "set_max_thinking_tokens": set_max_thinking_tokens, "mcp_status": mcp_status,
        "mcp_reconnect": mcp_reconnect, "mcp_toggle": mcp_toggle, "stop_task": stop_task,
        "rewind_files": rewind_files, "get_context_usage": get_context_usage,
        "get_settings": get_settings, "apply_flag_settings": apply_flag_settings,
        "rename_session": rename_session,
    }
    for subtype, handler in handlers.items():
        d.register(subtype, handler)  # type: ignore[arg-type]


def _mcp_server(server: DuplexServer, request: JSON) -> Any:
    name = request.get("serverName") or request.get("server_name")
    found = server.mcp_servers.get(str(name))
    if found is None:
        raise ControlError(f"MCP server not found: {name}", "not_found")
    return found


def server_settings(server: DuplexServer) -> JSON:
    effective = {"model": server.session.model,
                 "permissionMode": server.tool_state.policy.mode,
                 "permissions": {"allow": [str(r) for r in server.tool_state.policy.allow],
                                 "deny": [str(r) for r in server.tool_state.policy.deny],
                                 "ask": [str(r) for r in server.tool_state.policy.ask]},
                 **server.flag_settings}
    return {"effective": json.loads(json.dumps(effective)), "sources": server.settings_sources,
            "errors": server.settings_errors, "wisp_version": __version__,
            "claude_code_version": PROTOCOL_VERSION}
