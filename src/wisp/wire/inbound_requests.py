"""The control requests wisp answers (client → wisp): one `TypedDict` per subtype and its
`RequestType` (declared fields and, where those can't say it, one more check), gathered
by subtype in `INBOUND`. Re-exported by `wisp.wire.protocol`.
"""

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from wisp.errors import ControlError, InvalidRequest
from wisp.jsontypes import JSON
from wisp.permissions.modes import PERMISSION_MODES, PermissionMode, is_permission_mode
from wisp.wire.request_checks import RequestType, field


def bad_permission_mode() -> ControlError:
    """The refusal for a mode that is not one of PERMISSION_MODES (a phrase clients see)."""
    return ControlError(
        "Cannot set permission mode: must be one of " + ", ".join(PERMISSION_MODES),
        "invalid_mode",
    )


class Initialize(TypedDict):
    """Config the SDKs deliver in place of flags. `jsonSchema` is checked by its handler
    (it answers "Invalid jsonSchema: …"); `settings`, `managedSettings`, `disallowedTools`
    and `mcpServers` of the wrong type are acknowledged as not applied (`*_applied: false`),
    not refused."""

    subtype: Literal["initialize"]
    hooks: NotRequired[dict[str, Any] | None]
    agents: NotRequired[dict[str, Any] | None]
    jsonSchema: NotRequired[Any]
    systemPrompt: NotRequired[str | list[Any] | None]
    appendSystemPrompt: NotRequired[str | None]
    sdkMcpServers: NotRequired[list[Any] | None]
    sdkMcpServerManifests: NotRequired[dict[str, Any] | None]
    mcpServers: NotRequired[Any]
    settings: NotRequired[Any]
    managedSettings: NotRequired[Any]
    disallowedTools: NotRequired[Any]
    title: NotRequired[str | None]
    forwardSubagentText: NotRequired[bool | None]


class Interrupt(TypedDict):
    subtype: Literal["interrupt"]
    cancel_queued: NotRequired[bool | None]


class SetPermissionMode(TypedDict):
    subtype: Literal["set_permission_mode"]
    mode: PermissionMode


class SetModel(TypedDict):
    """`model` absent or null: the session's default model."""

    subtype: Literal["set_model"]
    model: NotRequired[str | None]


class SetMaxThinkingTokens(TypedDict):
    """A budget (classic models), 0 (thinking off) or null (the default); absent leaves
    the budget as it is. `thinking_display`: null restores the default display."""

    subtype: Literal["set_max_thinking_tokens"]
    max_thinking_tokens: NotRequired[int | None]
    thinking_display: NotRequired[str | None]


class McpStatus(TypedDict):
    subtype: Literal["mcp_status"]


class McpReconnect(TypedDict):
    """The server is named by `serverName` (both SDKs) or `server_name`."""

    subtype: Literal["mcp_reconnect"]
    serverName: NotRequired[str]
    server_name: NotRequired[str]


class McpToggle(TypedDict):
    subtype: Literal["mcp_toggle"]
    serverName: NotRequired[str]
    server_name: NotRequired[str]
    enabled: NotRequired[bool]


class StopTask(TypedDict):
    subtype: Literal["stop_task"]
    task_id: str


class RewindFiles(TypedDict):
    subtype: Literal["rewind_files"]
    user_message_id: str | None  # null: no checkpoint, as for an unknown id
    dry_run: NotRequired[bool | None]


class GetContextUsage(TypedDict):
    subtype: Literal["get_context_usage"]


class GetSettings(TypedDict):
    subtype: Literal["get_settings"]


class ApplyFlagSettings(TypedDict):
    subtype: Literal["apply_flag_settings"]
    settings: dict[str, Any]


class RenameSession(TypedDict):
    """A null title clears it."""

    subtype: Literal["rename_session"]
    title: str | None


class McpSetServers(TypedDict):
    """Replaces the servers the host manages at run time (SDK-hosted ones, and those an
    earlier call added): `servers` is an object of server configs, checked with the
    reference's phrase."""

    subtype: Literal["mcp_set_servers"]
    servers: dict[str, JSON]


class GetUsage(TypedDict):
    subtype: Literal["get_usage"]
    skip_behaviors: NotRequired[bool | None]


class ListModels(TypedDict):
    subtype: Literal["list_models"]


class GetSessionCost(TypedDict):
    subtype: Literal["get_session_cost"]


class ReloadSkills(TypedDict):
    subtype: Literal["reload_skills"]


class ReloadPlugins(TypedDict):
    subtype: Literal["reload_plugins"]
    add_plugins: NotRequired[list[JSON] | None]
    hold_on_cache_impact: NotRequired[bool | None]
    refuse_if_busy: NotRequired[bool | None]


class ReadFile(TypedDict):
    """A file for the host to show, under the Read tool's permission rules. A missing
    `path` is read as "" (and refused), as the reference does."""

    subtype: Literal["read_file"]
    path: NotRequired[str]
    max_bytes: NotRequired[int | None]
    encoding: NotRequired[str | None]


class GetPlan(TypedDict):
    subtype: Literal["get_plan"]


def _mode_allowed(request: Mapping[str, Any]) -> None:
    if not is_permission_mode(request["mode"]):
        raise bad_permission_mode()


def _names_a_server(request: Mapping[str, Any]) -> None:
    if not isinstance(request.get("serverName", request.get("server_name")), str):
        raise InvalidRequest(
            f"Invalid {request['subtype']} request: `serverName` must be a string")


def _server_configs(request: Mapping[str, Any]) -> None:
    servers = request.get("servers")
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise InvalidRequest("mcp_set_servers: servers must be an object of config objects")


def _plugin_paths(request: Mapping[str, Any]) -> None:
    """`add_plugins` as the SDKs' `plugins` option: local plugins by absolute path."""
    for entry in request.get("add_plugins") or []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not path.startswith("/"):
            raise InvalidRequest("reload_plugins: each of add_plugins must be "
                                 '{"type": "local", "path": <an absolute path>}')


_SERVER_NAME = (field("serverName", str), field("server_name", str))

INITIALIZE: RequestType[Initialize] = RequestType("initialize", (
    field("hooks", dict, nullable=True),
    field("agents", dict, nullable=True),
    field("systemPrompt", str, list, nullable=True),
    field("appendSystemPrompt", str, nullable=True),
    field("sdkMcpServers", list, nullable=True),
    field("sdkMcpServerManifests", dict, nullable=True),
    field("title", str, nullable=True),
    field("forwardSubagentText", bool, nullable=True),
))
INTERRUPT: RequestType[Interrupt] = RequestType(
    "interrupt", (field("cancel_queued", bool, nullable=True),))
SET_PERMISSION_MODE: RequestType[SetPermissionMode] = RequestType(
    "set_permission_mode", (field("mode", str, required=True),), _mode_allowed)
SET_MODEL: RequestType[SetModel] = RequestType(
    "set_model", (field("model", str, nullable=True),))
SET_MAX_THINKING_TOKENS: RequestType[SetMaxThinkingTokens] = RequestType(
    "set_max_thinking_tokens", (field("max_thinking_tokens", int, nullable=True),
                                field("thinking_display", str, nullable=True)))
MCP_STATUS: RequestType[McpStatus] = RequestType("mcp_status")
MCP_RECONNECT: RequestType[McpReconnect] = RequestType(
    "mcp_reconnect", _SERVER_NAME, _names_a_server)
MCP_TOGGLE: RequestType[McpToggle] = RequestType(
    "mcp_toggle", (*_SERVER_NAME, field("enabled", bool)), _names_a_server)
STOP_TASK: RequestType[StopTask] = RequestType(
    "stop_task", (field("task_id", str, required=True),))
REWIND_FILES: RequestType[RewindFiles] = RequestType("rewind_files", (
    field("user_message_id", str, required=True, nullable=True),
    field("dry_run", bool, nullable=True)))
GET_CONTEXT_USAGE: RequestType[GetContextUsage] = RequestType("get_context_usage")
GET_SETTINGS: RequestType[GetSettings] = RequestType("get_settings")
APPLY_FLAG_SETTINGS: RequestType[ApplyFlagSettings] = RequestType(
    "apply_flag_settings", (field("settings", dict, required=True),))
RENAME_SESSION: RequestType[RenameSession] = RequestType(
    "rename_session", (field("title", str, required=True, nullable=True),))
MCP_SET_SERVERS: RequestType[McpSetServers] = RequestType(
    "mcp_set_servers", (), _server_configs)
GET_USAGE: RequestType[GetUsage] = RequestType(
    "get_usage", (field("skip_behaviors", bool, nullable=True),))
LIST_MODELS: RequestType[ListModels] = RequestType("list_models")
GET_SESSION_COST: RequestType[GetSessionCost] = RequestType("get_session_cost")
RELOAD_SKILLS: RequestType[ReloadSkills] = RequestType("reload_skills")
RELOAD_PLUGINS: RequestType[ReloadPlugins] = RequestType("reload_plugins", (
    field("add_plugins", list, nullable=True), field("hold_on_cache_impact", bool, nullable=True),
    field("refuse_if_busy", bool, nullable=True)), _plugin_paths)
READ_FILE: RequestType[ReadFile] = RequestType("read_file", (
    field("path", str), field("max_bytes", int, nullable=True),
    field("encoding", str, nullable=True, choices=("utf-8", "base64"))))
GET_PLAN: RequestType[GetPlan] = RequestType("get_plan")

# Every request type wisp answers, by subtype. Anything else is answered "unsupported".
INBOUND: dict[str, RequestType[Any]] = {t.subtype: t for t in (
    INITIALIZE, INTERRUPT, SET_PERMISSION_MODE, SET_MODEL, SET_MAX_THINKING_TOKENS,
    MCP_STATUS, MCP_RECONNECT, MCP_TOGGLE, STOP_TASK, REWIND_FILES, GET_CONTEXT_USAGE,
    GET_SETTINGS, APPLY_FLAG_SETTINGS, RENAME_SESSION, MCP_SET_SERVERS, GET_USAGE, LIST_MODELS,
    GET_SESSION_COST, RELOAD_SKILLS, RELOAD_PLUGINS, READ_FILE, GET_PLAN,
)}
