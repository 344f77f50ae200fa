"""The duplex protocol's frames and control requests as types, and their checks.

Every stdin frame and every control request, in both directions, has a `TypedDict` here
with a `Literal` tag. Lines are parsed into a `StdinFrame` where they are read
(`wisp.control.stdin`); each control request is checked against its `RequestType` by the
dispatcher before its handler runs, so a handler receives a request whose fields have the
types declared here.

The checks are small and hand-written (required keys, JSON types, allowed values): this
module is on the path that answers `initialize` before the engine loads, so it imports
nothing heavier than `typing`. Unknown fields are tolerated (clients add fields as they
evolve); only the fields wisp reads are declared and checked. A request that fails a check
is answered with an error that names the field, and the session goes on.

This module holds the stdin frames; the checks are in `wisp.wire.request_checks`, the
requests wisp answers in `wisp.wire.inbound_requests` and those it sends in
`wisp.wire.outbound_requests`. It re-exports their names, so `protocol` stays the one
place a handler imports its request types from.
"""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, cast

from wisp.jsontypes import JSON
from wisp.wire.inbound_requests import (
    APPLY_FLAG_SETTINGS,
    GET_CONTEXT_USAGE,
    GET_PLAN,
    GET_SESSION_COST,
    GET_SETTINGS,
    GET_USAGE,
    INBOUND,
    INITIALIZE,
    INTERRUPT,
    LIST_MODELS,
    MCP_RECONNECT,
    MCP_SET_SERVERS,
    MCP_STATUS,
    MCP_TOGGLE,
    READ_FILE,
    RELOAD_PLUGINS,
    RELOAD_SKILLS,
    RENAME_SESSION,
    REWIND_FILES,
    SET_MAX_THINKING_TOKENS,
    SET_MODEL,
    SET_PERMISSION_MODE,
    STOP_TASK,
    ApplyFlagSettings,
    GetContextUsage,
    GetPlan,
    GetSessionCost,
    GetSettings,
    GetUsage,
    Initialize,
    Interrupt,
    ListModels,
    McpReconnect,
    McpSetServers,
    McpStatus,
    McpToggle,
    ReadFile,
    ReloadPlugins,
    ReloadSkills,
    RenameSession,
    RewindFiles,
    SetMaxThinkingTokens,
    SetModel,
    SetPermissionMode,
    StopTask,
    bad_permission_mode,
)
from wisp.wire.outbound_requests import (
    CanUseTool,
    Elicitation,
    HookCallback,
    McpMessage,
    McpMessageAnswer,
    OutboundRequest,
    PermissionAnswer,
)
from wisp.wire.request_checks import (
    Field,
    RequestType,
    field,
)

__all__ = ["APPLY_FLAG_SETTINGS", "FRAME_TYPES", "GET_CONTEXT_USAGE", "GET_PLAN",
           "GET_SESSION_COST", "GET_SETTINGS", "GET_USAGE", "INBOUND", "INITIALIZE",
           "INTERRUPT", "LIST_MODELS", "MCP_RECONNECT", "MCP_SET_SERVERS", "MCP_STATUS",
           "MCP_TOGGLE", "READ_FILE", "RELOAD_PLUGINS", "RELOAD_SKILLS", "RENAME_SESSION",
           "REWIND_FILES", "SET_MAX_THINKING_TOKENS", "SET_MODEL", "SET_PERMISSION_MODE",
           "STOP_TASK", "ApplyFlagSettings", "CanUseTool", "ControlCancelFrame",
           "ControlFrame", "ControlRequestFrame", "ControlResponse",
           "ControlResponseFrame", "Elicitation", "ErrorResponse", "Field",
           "GetContextUsage", "GetPlan", "GetSessionCost", "GetSettings", "GetUsage",
           "HookCallback", "Initialize", "Interrupt", "KeepAliveFrame", "ListModels",
           "McpMessage", "McpMessageAnswer", "McpReconnect", "McpSetServers", "McpStatus",
           "McpToggle", "OutboundRequest", "PermissionAnswer", "ReadFile", "ReloadPlugins",
           "ReloadSkills", "RenameSession", "RequestType", "RewindFiles",
           "SetMaxThinkingTokens", "SetModel", "SetPermissionMode", "StdinFrame",
           "StopTask", "SuccessResponse", "UserFrame", "UserMessage",
           "bad_permission_mode", "field", "request_id_of", "stdin_frame"]


# Stdin frames (client → wisp) -------------------------------------------------------------


class UserMessage(TypedDict):
    role: NotRequired[str]
    content: str | list[JSON]


class UserFrame(TypedDict):
    """A prompt. `session_id` is ignored: clients send "" or "default"."""

    type: Literal["user"]
    message: UserMessage
    session_id: NotRequired[str]
    parent_tool_use_id: NotRequired[str | None]
    uuid: NotRequired[str]


class ControlRequestFrame(TypedDict):
    type: Literal["control_request"]
    request_id: str
    request: JSON  # checked by the dispatcher against its subtype's RequestType


class SuccessResponse(TypedDict):
    subtype: Literal["success"]
    request_id: str
    response: NotRequired[JSON]


class ErrorResponse(TypedDict):
    subtype: Literal["error"]
    request_id: str
    error: str
    error_code: NotRequired[str]


ControlResponse = SuccessResponse | ErrorResponse


class ControlResponseFrame(TypedDict):
    type: Literal["control_response"]
    response: ControlResponse


class ControlCancelFrame(TypedDict):
    """Withdraws a request (either direction); no response is owed for it."""

    type: Literal["control_cancel_request"]
    request_id: str


class KeepAliveFrame(TypedDict):
    type: Literal["keep_alive"]


ControlFrame = ControlRequestFrame | ControlResponseFrame | ControlCancelFrame
StdinFrame = UserFrame | ControlFrame | KeepAliveFrame
FRAME_TYPES = ("user", "control_request", "control_response", "control_cancel_request",
               "keep_alive")


def stdin_frame(value: Mapping[str, Any]) -> StdinFrame | None:
    """The typed frame for a parsed stdin object, or None when it is not one of the frames
    above in a usable shape: an unknown type (ignored, as the reference does), a user frame
    without content, a control frame without its object. Those are reported by whoever
    routes frames; nothing here raises."""
    kind = value.get("type")
    if kind == "user":
        message = value.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return cast(UserFrame, value) if isinstance(content, (str, list)) else None
    if kind == "control_request":
        ok = isinstance(value.get("request"), dict)
        return cast(ControlRequestFrame, value) if ok else None
    if kind == "control_response":
        response = value.get("response")
        ok = isinstance(response, dict) and response.get("subtype") in ("success", "error")
        return cast(ControlResponseFrame, value) if ok else None
    if kind == "control_cancel_request":
        return cast(ControlCancelFrame, value)
    if kind == "keep_alive":
        return cast(KeepAliveFrame, value)
    return None


def request_id_of(frame: Mapping[str, Any]) -> str:
    """The id a control frame (or a response inside one) carries, as the string that
    correlates it. A missing id reads as "None", which matches nothing wisp sent."""
    return str(frame.get("request_id"))
