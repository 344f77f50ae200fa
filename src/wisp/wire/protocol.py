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
"""

from collections.abc import Callable, Mapping
from typing import (
    Any,
    Generic,
    Literal,
    NotRequired,
    TypedDict,
    TypeVar,
    cast,
)

from wisp.errors import ControlError, InvalidRequest
from wisp.jsontypes import JSON
from wisp.permissions.modes import PERMISSION_MODES, PermissionMode, is_permission_mode


def bad_permission_mode() -> ControlError:
    """The refusal for a mode that is not one of PERMISSION_MODES (a phrase clients see)."""
    return ControlError(
        "Cannot set permission mode: must be one of " + ", ".join(PERMISSION_MODES),
        "invalid_mode",
    )


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


# Checks ---------------------------------------------------------------------------------

_NAMES: dict[type, str] = {
    str: "a string", bool: "a boolean", int: "an integer", float: "a number",
    dict: "an object", list: "an array",
}


def _is(value: object, kind: type) -> bool:
    if kind is int:  # JSON has no separate bool/int, but Python's bool is an int
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


class Field:
    """One declared field: the JSON types it may have, whether it must be present, whether
    null is allowed (meaning "not given"), and for strings the values allowed. (Plain
    classes, not dataclasses, here: building a dataclass costs milliseconds at import.)"""

    __slots__ = ("choices", "kinds", "name", "nullable", "required")

    def __init__(self, name: str, kinds: tuple[type, ...], required: bool = False,
                 nullable: bool = False, choices: tuple[str, ...] = ()) -> None:
        self.name = name
        self.kinds = kinds
        self.required = required
        self.nullable = nullable
        self.choices = choices

    def expected(self) -> str:
        if self.choices:
            return "one of " + ", ".join(self.choices)
        names = [_NAMES[k] for k in self.kinds] + (["null"] if self.nullable else [])
        return " or ".join(names)

    def problem(self, request: Mapping[str, Any]) -> str | None:
        if self.name not in request:
            return f"`{self.name}` must be {self.expected()}" if self.required else None
        value = request[self.name]
        if value is None and self.nullable:
            return None
        if not any(_is(value, k) for k in self.kinds) or (
                self.choices and value not in self.choices):
            return f"`{self.name}` must be {self.expected()}"
        return None


def field(name: str, *kinds: type, required: bool = False, nullable: bool = False,
          choices: tuple[str, ...] = ()) -> Field:
    return Field(name, kinds, required, nullable, choices)


R = TypeVar("R")


class RequestType(Generic[R]):
    """A control request subtype: its declared fields and, where the fields alone can't
    say it, one more check (`extra`, which raises a ControlError with its own phrase)."""

    __slots__ = ("extra", "fields", "subtype")

    def __init__(self, subtype: str, fields: tuple[Field, ...] = (),
                 extra: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self.subtype = subtype
        self.fields = fields
        self.extra = extra

    def __repr__(self) -> str:
        return f"RequestType({self.subtype!r})"

    def problem(self, request: Mapping[str, Any]) -> str | None:
        for declared in self.fields:
            found = declared.problem(request)
            if found is not None:
                return f"Invalid {self.subtype} request: {found}"
        return None

    def parse(self, request: Mapping[str, Any]) -> R:
        """The request as its TypedDict, or InvalidRequest naming the first bad field."""
        found = self.problem(request)
        if found is not None:
            raise InvalidRequest(found)
        if self.extra is not None:
            self.extra(request)
        return cast(R, request)


# Control requests wisp answers (client → wisp) ---------------------------------------------


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


# Control requests wisp sends (wisp → client), and the answers it reads -----------------------


class CanUseTool(TypedDict):
    """Asks the host whether a tool call may run (only with `--permission-prompt-tool
    stdio`)."""

    subtype: Literal["can_use_tool"]
    tool_name: str
    display_name: str
    input: JSON
    description: str
    permission_suggestions: list[JSON]
    decision_reason_type: str
    tool_use_id: str
    decision_reason: NotRequired[str]
    blocked_path: NotRequired[str]
    requires_user_interaction: NotRequired[bool]


class PermissionAnswer(TypedDict, total=False):
    """The host's answer to `can_use_tool`. Allow: `updatedInput` (absent means the input
    as asked) and `updatedPermissions`. Deny: `message`, and `interrupt` to end the turn."""

    behavior: Literal["allow", "deny"]
    updatedInput: JSON
    updatedPermissions: list[JSON]
    message: str
    interrupt: bool


class HookCallback(TypedDict):
    """Runs an SDK hook; the answer is the hook's output (`wisp.hooks.model.HookOutput`)."""

    subtype: Literal["hook_callback"]
    callback_id: str
    input: JSON
    tool_use_id: str


class McpMessage(TypedDict):
    """One JSON-RPC message for an MCP server that lives in the SDK process."""

    subtype: Literal["mcp_message"]
    server_name: str
    message: JSON


class McpMessageAnswer(TypedDict, total=False):
    mcp_response: JSON


class Elicitation(TypedDict):
    """An MCP server asks the user mid-call (`elicitation/create`): a form (`requested_schema`,
    fields in `property_order`) or a page to open (`mode: "url"`); answered as MCP's."""

    subtype: Literal["elicitation"]
    mcp_server_name: str
    message: str
    mode: NotRequired[Literal["form", "url"]]
    url: NotRequired[str]
    elicitation_id: NotRequired[str]
    requested_schema: NotRequired[JSON]
    property_order: NotRequired[list[str]]


OutboundRequest = CanUseTool | HookCallback | McpMessage | Elicitation
