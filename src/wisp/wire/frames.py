"""Builders for the stdout frames of the stream-json protocol, used by the stream-json
projection (`wisp.wire.projection`) and the duplex front end's own protocol frames.

Frame names and fields are public API: the official SDKs parse them (the Python SDK
strictly). Every main-thread frame carries an explicit `parent_tool_use_id: null`, because
the TypeScript SDK tests `=== null` to notice a new turn.
"""

from __future__ import annotations

from typing import Any

from wisp import PROTOCOL_VERSION, __version__
from wisp.jsontypes import JSON
from wisp.stamps import iso_now, new_uuid

__all__ = ["assistant", "init", "iso_now", "new_uuid", "stream_event", "system", "user"]


def system(subtype: str, session_id: str, **fields: Any) -> JSON:
    return {"type": "system", "subtype": subtype, **fields, "session_id": session_id,
            "uuid": new_uuid()}


def init(
    *,
    session_id: str,
    cwd: str,
    tools: list[str],
    model: str,
    permission_mode: str,
    api_key_source: str,
    mcp_servers: list[JSON] | None = None,
    agents: list[str] | None = None,
    slash_commands: list[str] | None = None,
    skills: list[str] | None = None,
    plugins: list[JSON] | None = None,
    output_style: str = "default",
    sandbox: JSON | None = None,
) -> JSON:
    """`sandbox`: the OS sandbox in force (`wisp.sandbox.runner.status_fields`), None when
    it is off; `sandbox_enabled` is the reference's flag for it."""
    frame = {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": session_id,
        "tools": tools,
        "mcp_servers": mcp_servers or [],
        "model": model,
        "permissionMode": permission_mode,
        "slash_commands": slash_commands or [],
        "apiKeySource": api_key_source,
        "claude_code_version": PROTOCOL_VERSION,
        "wisp_version": __version__,
        "output_style": output_style,
        "agents": agents or [],
        "skills": skills or [],
        "plugins": plugins or [],
        "uuid": new_uuid(),
        "sandbox_enabled": sandbox is not None and bool(sandbox.get("enabled")),
    }
    if sandbox is not None:
        frame["sandbox"] = sandbox
    return frame


def assistant(
    message: JSON,
    content: list[JSON],
    *,
    session_id: str,
    request_id: str | None,
    parent_tool_use_id: str | None = None,
    uuid_: str | None = None,
    **extra: Any,
) -> JSON:
    """One assistant frame. The reference streams one frame per content block, each with
    `stop_reason: null`; the real stop reason is on the result and in the transcript."""
    body = {
        "id": message.get("id"),
        "type": "message",
        "role": "assistant",
        "model": message.get("model") or "<synthetic>",
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": message.get("usage") or {},
        "context_management": None,
    }
    frame: JSON = {
        "type": "assistant",
        "message": body,
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": uuid_ or new_uuid(),
        "timestamp": iso_now(),
    }
    if request_id:
        frame["request_id"] = request_id
    frame.update(extra)
    return frame


def user(
    content: str | list[JSON],
    *,
    session_id: str,
    parent_tool_use_id: str | None = None,
    uuid_: str | None = None,
    **extra: Any,
) -> JSON:
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": uuid_ or new_uuid(),
        "timestamp": iso_now(),
        **extra,
    }


def stream_event(
    event: JSON, *, session_id: str, message_id: str | None, parent_tool_use_id: str | None = None
) -> JSON:
    frame: JSON = {
        "type": "stream_event",
        "event": event,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "uuid": new_uuid(),
    }
    if message_id:
        frame["api_message_id"] = message_id
    return frame


def start_failed(message: str, session_id: str) -> JSON:
    """The `result` for a session that could not start (the session or message to resume is
    not there): written in stream-json before exiting 1, as the reference does, so an SDK
    raises `message` instead of a bare process failure. Nothing ran: every count is zero."""
    return {
        "type": "result",
        "subtype": "error_during_execution",
        "duration_ms": 0,
        "duration_api_ms": 0,
        "is_error": True,
        "num_turns": 0,
        "stop_reason": None,
        "session_id": session_id,
        "total_cost_usd": 0,
        "usage": _no_usage(),
        "modelUsage": {},
        "permission_denials": [],
        "uuid": new_uuid(),
        "errors": [message],
        "result_index": 0,
    }


def _no_usage() -> JSON:
    return {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard"}


def not_logged_in(message: str, session_id: str) -> tuple[JSON, JSON]:
    """The assistant frame and the result of a run refused before its model call because
    no key and no endpoint are set (`wisp.models.spec`): the frames the projection gives
    a turn whose model call failed that way, written before the engine loads (the
    reference answers a run without credentials with these too)."""
    synthetic = {"id": new_uuid(), "model": "<synthetic>", "usage": {}}
    said = assistant(synthetic, [{"type": "text", "text": message}], session_id=session_id,
                     request_id=None, error="authentication_failed",
                     is_api_error_message=True, api_error_status=None)
    result = {
        "type": "result", "subtype": "success", "is_error": True, "duration_ms": 0,
        "duration_api_ms": 0, "num_turns": 1, "session_id": session_id, "stop_reason": None,
        "total_cost_usd": 0, "usage": _no_usage(), "modelUsage": {},
        "model_usage_since_last_result": {}, "permission_denials": [],
        "terminal_reason": "api_error", "api_error_status": None, "errors": [],
        "uuid": new_uuid(), "result_index": 0, "result": message,
        "api_error_type": "authentication_error",
    }
    return said, result
