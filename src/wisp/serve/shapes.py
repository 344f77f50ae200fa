"""The JSON shapes of the Managed Agents API as the official `anthropic` SDK defines them
(docs/managed-agents-api.md): pure functions, no I/O.

Requests: `agent_create`, `agent_update`, `environment_create`, `environment_update`,
`session_create`, `session_update` and `send_events` take a decoded JSON body and return
it normalised (defaults filled in, unknown keys dropped), or raise `ShapeError` naming the
field at fault (`tools[0].type: expected one of ...`). The `*_query` functions do the same
for the query strings of the list and stream endpoints.

Responses: `agent_document`, `environment_document` and `session_document` add the
server's fields (id, `type`, timestamps, `version`, ...); `agent_updated`,
`environment_updated`, `session_updated` and `archived` derive the next document.

Events: one builder per event type the server emits (`agent_message`, `status_idle`,
`model_request_start`, ...), and `client_event_record` for the echo of a posted event, so
no other module writes an event dict by hand.
"""

from __future__ import annotations

import copy
import json
import math
import re
import secrets
import string
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final, NoReturn, cast

from wisp.jsonsafe import encode_utf8
from wisp.stamps import iso_now

JSON = dict[str, Any]
Parser = Callable[[JSON, str], JSON]

AGENT_TOOLSET: Final = "agent_toolset_20260401"
# The tools of `agent_toolset_20260401`, by the names they carry in `agent.tool_use`.
AGENT_TOOL_NAMES: Final = ("bash", "edit", "read", "write", "glob", "grep", "web_fetch",
                           "web_search")
POLICIES: Final = ("always_allow", "always_ask", "auto")
EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")
# The API resolves an omitted effort to a per-model default at save time; wisp has one.
DEFAULT_EFFORT: Final = "high"
SESSION_STATUSES: Final = ("rescheduling", "running", "idle", "terminated")
STOP_REASONS: Final = ("end_turn", "requires_action", "retries_exhausted", "budget_reached",
                       "refusal")
CLIENT_EVENT_TYPES: Final = ("user.message", "user.interrupt", "user.tool_confirmation",
                             "user.custom_tool_result", "user.define_outcome",
                             "user.tool_result", "system.message")
# Every `type` the events list accepts in `types[]` (BetaManagedAgentsSessionEventType).
EVENT_TYPES: Final = (
    *CLIENT_EVENT_TYPES, "agent.custom_tool_use", "agent.message", "agent.thinking",
    "agent.mcp_tool_use", "agent.mcp_tool_result", "agent.tool_use", "agent.tool_result",
    "agent.thread_message_received", "agent.thread_message_sent",
    "agent.thread_context_compacted", "session.error", "session.status_rescheduled",
    "session.status_running", "session.status_idle", "session.status_terminated",
    "session.thread_created", "span.outcome_evaluation_start",
    "span.outcome_evaluation_end", "span.model_request_start", "span.model_request_end",
    "span.outcome_evaluation_ongoing", "session.thread_status_running",
    "session.thread_status_idle", "session.thread_status_terminated",
    "session.thread_status_rescheduled", "session.updated", "session.usage",
    "workflow_run.created", "workflow_run.status_running",
    "workflow_run.status_idle", "workflow_run.status_ended", "workflow_run.error",
    "workflow_run.phase_started", "workflow_run.phase_ended")
SESSION_ERROR_TYPES: Final = (
    "unknown_error", "model_overloaded_error", "model_rate_limited_error",
    "model_request_failed_error", "mcp_connection_failed_error",
    "mcp_authentication_failed_error", "billing_error", "credential_host_unreachable_error",
    "tool_use_limit_reached_error", "compaction_limit_reached_error",
    "repository_authentication_error", "repository_forbidden_error",
    "repository_not_found_error", "repository_checkout_error", "repository_clone_error")
_MAX_METADATA = 16
_MAX_TOOLS = 256
_MAX_MCP_SERVERS = 20
_MAX_INITIAL_EVENTS = 50
_ID_ALPHABET = string.ascii_letters + string.digits
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}\Z")
_AMOUNT = re.compile(r"\d+(\.\d+)?\Z")


def _schema(required: Sequence[str], **properties: JSON) -> JSON:
    return {"type": "object", "properties": copy.deepcopy(properties),
            "required": list(required)}


# The inputs of the toolset tools a client runs (the SDK's `beta_agent_toolset_20260401`
# parses exactly these fields), for the tool definitions the model is given.
_STRING: Final = {"type": "string"}
AGENT_TOOL_INPUT_SCHEMAS: Final[Mapping[str, JSON]] = {
    "bash": _schema((), command={**_STRING, "description": "Command for the persistent shell"},
                    restart={"type": "boolean", "description": "Start a fresh shell instead"},
                    timeout_ms={"type": "integer", "description": "Limit in ms (default 120000)"}),
    "read": _schema(("file_path",), file_path=_STRING, view_range={
        "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
        "description": "[first, last] line, 1-based and inclusive; last <= 0 reads to the end"}),
    "write": _schema(("file_path", "content"), file_path=_STRING, content=_STRING),
    "edit": _schema(("file_path", "old_string", "new_string"), file_path=_STRING,
                    old_string={**_STRING, "description": "Text to replace; must be unique "
                                                          "unless replace_all"},
                    new_string=_STRING, replace_all={"type": "boolean"}),
    "glob": _schema(("pattern",), pattern={**_STRING, "description": "Relative glob, e.g. **/*.py"},
                    path={**_STRING, "description": "Directory to search (default: workdir)"}),
    "grep": _schema(("pattern",), pattern={**_STRING, "description": "Regular expression"},
                    path={**_STRING, "description": "Directory to search (default: workdir)"}),
}


# Errors and primitive readers ---------------------------------------------------------------

class ShapeError(ValueError):
    """A request field of the wrong type or value; `path` names it (`tools[0].type`)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path or "body"
        self.message = message
        super().__init__(f"{self.path}: {message}")


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _obj(value: object, path: str) -> JSON:
    if not isinstance(value, dict):
        raise ShapeError(path, "expected an object")
    return cast(JSON, value)


def _list(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ShapeError(path, "expected an array")
    return value


def _str(value: object, path: str, *, empty: bool = True, limit: int | None = None) -> str:
    if not isinstance(value, str):
        raise ShapeError(path, "expected a string")
    if not empty and not value:
        raise ShapeError(path, "must not be empty")
    if limit is not None and len(value) > limit:
        raise ShapeError(path, f"longer than {limit} characters")
    return value


def _opt_str(value: object, path: str) -> str | None:
    return None if value is None else _str(value, path)


def _bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise ShapeError(path, "expected a boolean")
    return value


def _int(value: object, path: str, lo: int | None = None, hi: int | None = None) -> int:
    # bool is an int to Python, never to a JSON schema
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(path, "expected an integer")
    if lo is not None and value < lo:
        raise ShapeError(path, f"expected an integer of at least {lo}")
    if hi is not None and value > hi:
        raise ShapeError(path, f"expected an integer of at most {hi}")
    return value


def _choice(value: object, path: str, options: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in options:
        raise ShapeError(path, "expected one of " + ", ".join(f'"{o}"' for o in options))
    return value


def _strs(value: object, path: str) -> list[str]:
    return [_str(item, f"{path}[{i}]") for i, item in enumerate(_list(value, path))]


def _required(obj: JSON, key: str, path: str) -> Any:
    if obj.get(key) is None:
        raise ShapeError(_at(path, key), "required")
    return obj[key]


def _get(obj: JSON, key: str, path: str, read: Callable[[Any, str], Any],
         default: Any = None) -> Any:
    """`read(obj[key])`, or `default` when the key is absent or null."""
    value = obj.get(key)
    return default if value is None else read(value, _at(path, key))


def _variant(value: object, path: str, kinds: Mapping[str, Parser]) -> JSON:
    """One member of a union discriminated by `type`, read by the parser of its kind."""
    obj = _obj(value, path)
    kind = _choice(obj.get("type"), _at(path, "type"), tuple(kinds))
    return kinds[kind](obj, path)


def _items(value: object, path: str, read: Callable[[Any, str], JSON]) -> list[JSON]:
    return [read(item, f"{path}[{i}]") for i, item in enumerate(_list(value, path))]


def _unique(names: Sequence[str], path: str, what: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise ShapeError(f"{path}[{i}]", f'{what} "{name}" appears twice')
        seen.add(name)


def _metadata(value: object, path: str, *, patch: bool = False) -> dict[str, str | None]:
    """A metadata bag; in a patch a null value deletes its key."""
    out: dict[str, str | None] = {}
    for key, item in _obj(value, path).items():
        where = _at(path, key)
        if len(key) > 64:
            raise ShapeError(where, "key longer than 64 characters")
        out[key] = None if patch and item is None else _str(item, where, limit=512)
    if not patch and len(out) > _MAX_METADATA:
        raise ShapeError(path, f"more than {_MAX_METADATA} pairs")
    return out


def _patch_metadata(current: Mapping[str, str], patch: Mapping[str, str | None],
                    *, empty_deletes: bool = False) -> dict[str, str]:
    merged = dict(current)
    for key, value in patch.items():
        if value is None or (empty_deletes and value == ""):
            merged.pop(key, None)
        else:
            merged[key] = value
    if len(merged) > _MAX_METADATA:
        raise ShapeError("metadata", f"more than {_MAX_METADATA} pairs")
    return merged


# Ids and time -------------------------------------------------------------------------------

def new_id(prefix: str) -> str:
    """`prefix_` and 24 random base62 characters (`sevt_…`, `sesn_…`, `agent_…`, `env_…`)."""
    return prefix + "_" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(24))


def timestamp() -> str:
    """Now, as every document and event carries it: ISO 8601, UTC, milliseconds, `Z`."""
    return iso_now()


def _format_ms(moment: datetime, ms: int) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms:03d}Z"


def instant(value: object, path: str, *, round_up: bool = False) -> str:
    """A query timestamp (`2026-01-02T03:04:05+00:00`: the SDK sends `datetime`s with an
    offset, not `Z`) in the stored form, so the store can compare strings. Stored stamps
    have milliseconds: `round_up` is for `gte`/`lt`, whose bound must round up to keep the
    comparison exact on that grid."""
    text = _str(value, path)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ShapeError(path, "expected an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    micro = moment.microsecond
    ms = math.ceil(micro / 1000) if round_up else micro // 1000
    base = moment.replace(microsecond=0) + timedelta(seconds=ms // 1000)
    return _format_ms(base, ms % 1000)


# Agents: model, tools, MCP servers, skills --------------------------------------------------

def _effort(value: object, path: str) -> JSON:
    # A bare level ("high") or the object form ({"type": "high"})
    if isinstance(value, dict):
        return {"type": _choice(value.get("type"), _at(path, "type"), EFFORTS)}
    return {"type": _choice(value, path, EFFORTS)}


def _model(value: object, path: str, *, fill: bool = True) -> JSON:
    """The `model` param (an id string or a model_config object) as the response's
    model_config. `fill=False` leaves an omitted effort None, for an update to keep."""
    if isinstance(value, str):
        value = {"id": _str(value, path, empty=False)}
    if not isinstance(value, dict):
        raise ShapeError(path, "expected a model id string or an object")
    obj = cast(JSON, value)
    effort = _get(obj, "effort", path, _effort)
    return {
        "id": _str(_required(obj, "id", path), _at(path, "id"), empty=False),
        "effort": effort or ({"type": DEFAULT_EFFORT} if fill else None),
        "speed": _get(obj, "speed", path, lambda v, p: _choice(v, p, ("standard", "fast")),
                      "standard"),
        "inference_geo": _get(obj, "inference_geo", path, _str),
    }


def _policy(value: object, path: str, default: JSON) -> JSON:
    if value is None:
        return dict(default)
    return {"type": _choice(_obj(value, path).get("type"), _at(path, "type"), POLICIES)}


def _default_config(value: object, path: str, policy: str) -> JSON:
    obj = {} if value is None else _obj(value, path)
    return _override(obj, path, {"enabled": True, "permission_policy": {"type": policy}})


def _override(obj: JSON, path: str, default: JSON) -> JSON:
    """`enabled` and `permission_policy`, each falling back to the toolset's default."""
    return {
        "enabled": _get(obj, "enabled", path, _bool, default["enabled"]),
        "permission_policy": _policy(obj.get("permission_policy"),
                                     _at(path, "permission_policy"),
                                     default["permission_policy"]),
    }


def _web_options(obj: JSON, path: str, name: str) -> JSON:
    """The extra settings of the two web tools, kept as given once their types check."""
    out: JSON = {}
    for key in ("allowed_domains", "blocked_domains"):
        if obj.get(key) is not None:
            out[key] = _strs(obj[key], _at(path, key))
    extra = {"web_fetch": ("max_content_tokens", "url_sources"),
             "web_search": ("user_location",)}[name]
    for key in extra:
        if obj.get(key) is None:
            continue
        where = _at(path, key)
        out[key] = (_int(obj[key], where, 1) if key == "max_content_tokens"
                    else copy.deepcopy(_obj(obj[key], where)))
    return out


def _toolset_config(value: object, path: str, default: JSON) -> JSON:
    obj = _obj(value, path)
    name = _choice(obj.get("name"), _at(path, "name"), AGENT_TOOL_NAMES)
    if obj.get("type") is not None:
        _choice(obj["type"], _at(path, "type"), (name,))
    out = {"name": name, "type": name, **_override(obj, path, default)}
    if name in ("web_fetch", "web_search"):
        out.update(_web_options(obj, path, name))
    return out


def _agent_toolset(obj: JSON, path: str) -> JSON:
    # Omitting default_config enables every tool under always_allow.
    default = _default_config(obj.get("default_config"), _at(path, "default_config"),
                              "always_allow")
    where = _at(path, "configs")
    configs = _items(obj.get("configs") or [], where,
                     lambda v, p: _toolset_config(v, p, default))
    _unique([c["name"] for c in configs], where, "tool")
    return {"type": AGENT_TOOLSET, "default_config": default, "configs": configs}


def _mcp_tool_config(value: object, path: str, default: JSON) -> JSON:
    obj = _obj(value, path)
    name = _str(_required(obj, "name", path), _at(path, "name"), empty=False)
    return {"name": name, **_override(obj, path, default)}


def _mcp_toolset(obj: JSON, path: str) -> JSON:
    server = _str(_required(obj, "mcp_server_name", path), _at(path, "mcp_server_name"),
                  empty=False)
    # MCP toolsets default to always_ask: a server may grow tools nobody reviewed.
    default = _default_config(obj.get("default_config"), _at(path, "default_config"),
                              "always_ask")
    where = _at(path, "configs")
    configs = _items(obj.get("configs") or [], where,
                     lambda v, p: _mcp_tool_config(v, p, default))
    _unique([c["name"] for c in configs], where, "tool")
    return {"type": "mcp_toolset", "mcp_server_name": server, "default_config": default,
            "configs": configs}


def _input_schema(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    _choice(obj.get("type"), _at(path, "type"), ("object",))
    _get(obj, "properties", path, _obj)
    _get(obj, "required", path, _strs)
    return copy.deepcopy(obj)  # a JSON Schema: every keyword of it is meaningful


def _custom_tool(obj: JSON, path: str) -> JSON:
    name = _str(_required(obj, "name", path), _at(path, "name"))
    if not _TOOL_NAME.match(name):
        raise ShapeError(_at(path, "name"), "expected 1-128 letters, digits, '_' or '-'")
    return {
        "type": "custom",
        "name": name,
        "description": _str(_required(obj, "description", path), _at(path, "description")),
        "input_schema": _input_schema(_required(obj, "input_schema", path),
                                      _at(path, "input_schema")),
    }


_TOOL_KINDS: Final[Mapping[str, Parser]] = {
    AGENT_TOOLSET: _agent_toolset, "mcp_toolset": _mcp_toolset, "custom": _custom_tool}


def _tool_names(tool: JSON) -> list[str]:
    """The names a tools[] entry puts before the model (a toolset: its enabled tools)."""
    if tool["type"] == "custom":
        return [tool["name"]]
    if tool["type"] == "mcp_toolset":
        return ["mcp_toolset:" + tool["mcp_server_name"]]
    return [AGENT_TOOLSET, *(n for n in AGENT_TOOL_NAMES if _toolset_tool(tool, n)[0])]


def _tools(value: object, path: str) -> list[JSON]:
    tools = _items(value, path, lambda v, p: _variant(v, p, _TOOL_KINDS))
    if len(tools) > _MAX_TOOLS:
        raise ShapeError(path, f"more than {_MAX_TOOLS} tools")
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        for name in _tool_names(tool):
            if name in seen:
                raise ShapeError(f"{path}[{i}]", f'tool "{name}" is defined twice')
            seen.add(name)
    return tools


def _mcp_server(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    _choice(obj.get("type"), _at(path, "type"), ("url",))
    return {"type": "url",
            "name": _str(_required(obj, "name", path), _at(path, "name"), empty=False),
            "url": _str(_required(obj, "url", path), _at(path, "url"), empty=False)}


def _mcp_servers(value: object, path: str) -> list[JSON]:
    servers = _items(value, path, _mcp_server)
    if len(servers) > _MAX_MCP_SERVERS:
        raise ShapeError(path, f"more than {_MAX_MCP_SERVERS} servers")
    _unique([s["name"] for s in servers], path, "server name")
    return servers


def _check_mcp_refs(fields: JSON, path: str = "") -> None:
    """Every mcp_toolset names a server of mcp_servers, and every server is used."""
    names = [s["name"] for s in fields["mcp_servers"]]
    used: set[str] = set()
    for i, tool in enumerate(fields["tools"]):
        if tool["type"] == "mcp_toolset":
            if tool["mcp_server_name"] not in names:
                raise ShapeError(_at(path, f"tools[{i}].mcp_server_name"),
                                 f'no mcp_servers entry is named "{tool["mcp_server_name"]}"')
            used.add(tool["mcp_server_name"])
    for i, name in enumerate(names):
        if name not in used:
            raise ShapeError(_at(path, f"mcp_servers[{i}].name"),
                             "not used by any mcp_toolset in tools")


def _skill(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    return {"type": _choice(obj.get("type"), _at(path, "type"), ("anthropic", "custom")),
            "skill_id": _str(_required(obj, "skill_id", path), _at(path, "skill_id"),
                             empty=False),
            "version": _get(obj, "version", path, _str, "latest")}


def _skills(value: object, path: str) -> list[JSON]:
    return _items(value, path, _skill)


def _identity(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    kind = _choice(obj.get("type"), _at(path, "type"), ("service_account", "aws_role"))
    if kind == "service_account":
        return {"type": kind}
    return {"type": kind, "role_arn": _str(_required(obj, "role_arn", path),
                                           _at(path, "role_arn"), empty=False)}


_SERVICE_ACCOUNT: Final = {"type": "service_account"}


def _no_multiagent(value: object, path: str) -> NoReturn:
    raise ShapeError(path, "multiagent sessions are not supported by this server")


def _clearable_str(value: object, path: str) -> str | None:
    # On update an empty string clears the field like null does.
    return _opt_str(value, path) or None


# Agents: requests and documents -------------------------------------------------------------

def agent_create(body: object) -> JSON:
    """The body of `POST /v1/agents`, normalised to the agent document's own fields."""
    obj = _obj(body, "")
    fields: JSON = {
        "name": _str(_required(obj, "name", ""), "name", empty=False),
        "model": _model(_required(obj, "model", ""), "model"),
        "description": _get(obj, "description", "", _str),
        "system": _get(obj, "system", "", _str),
        "metadata": _get(obj, "metadata", "", _metadata, {}),
        "tools": _get(obj, "tools", "", _tools, []),
        "mcp_servers": _get(obj, "mcp_servers", "", _mcp_servers, []),
        "skills": _get(obj, "skills", "", _skills, []),
        "execution_identity": _get(obj, "execution_identity", "", _identity,
                                   dict(_SERVICE_ACCOUNT)),
        "multiagent": _get(obj, "multiagent", "", _no_multiagent),
    }
    _check_mcp_refs(fields)
    return fields


# How each field of `POST /v1/agents/{id}` reads, and what its null means: None, refused;
# "clear", stored as null; "skip", ignored; anything else, that value.
_AGENT_PATCH: Final[Mapping[str, tuple[Callable[[Any, str], Any], Any]]] = {
    "name": (lambda v, p: _str(v, p, empty=False), None),
    "model": (lambda v, p: _model(v, p, fill=False), None),
    "description": (_clearable_str, "clear"),
    "system": (_clearable_str, "clear"),
    "tools": (_tools, []),
    "mcp_servers": (_mcp_servers, []),
    "skills": (_skills, []),
    "execution_identity": (_identity, _SERVICE_ACCOUNT),
    "metadata": (lambda v, p: _metadata(v, p, patch=True), {}),
    "multiagent": (_no_multiagent, "clear"),
    "version": (lambda v, p: _int(v, p, 1), "skip"),
}


def _patch_field(obj: JSON, key: str, read: Callable[[Any, str], Any], if_null: Any) -> Any:
    if obj[key] is not None:
        return read(obj[key], key)
    if if_null is None:
        raise ShapeError(key, "cannot be null")
    return None if if_null == "clear" else copy.deepcopy(if_null)


def agent_update(body: object) -> JSON:
    """The body of `POST /v1/agents/{id}`: only the fields it sends, normalised. `version`,
    when present, is the version the client expects to replace (the caller compares)."""
    obj = _obj(body, "")
    patch: JSON = {}
    for key, (read, if_null) in _AGENT_PATCH.items():
        if key in obj and not (obj[key] is None and if_null == "skip"):
            patch[key] = _patch_field(obj, key, read, if_null)
    return patch


def agent_document(fields: JSON, *, agent_id: str | None = None, now: str | None = None) -> JSON:
    """A new agent (BetaManagedAgentsAgent) from `agent_create`'s fields: version 1."""
    now = now or timestamp()
    return {"id": agent_id or new_id("agent"), "type": "agent", **copy.deepcopy(fields),
            "version": 1, "created_at": now, "updated_at": now, "archived_at": None}


def agent_updated(doc: JSON, patch: JSON, *, now: str | None = None) -> JSON:
    """`doc` with `agent_update`'s patch applied: a new version when anything changed."""
    new = copy.deepcopy(doc)
    for key, value in patch.items():
        if key == "metadata":
            new[key] = _patch_metadata(doc.get("metadata") or {}, value)
        elif key == "model" and value["effort"] is None:
            new[key] = {**value, "effort": doc["model"].get("effort")}
        elif key != "version":
            new[key] = copy.deepcopy(value)
    _check_mcp_refs(new)
    if new != doc:
        new["version"] = doc["version"] + 1
        new["updated_at"] = now or timestamp()
    return new


# The agent fields a session snapshots (BetaManagedAgentsSessionAgent).
_SNAPSHOT_FIELDS: Final = ("id", "type", "version", "name", "description", "model", "system",
                           "tools", "mcp_servers", "skills", "execution_identity",
                           "multiagent")


def session_agent(agent: JSON, overrides: JSON | None = None) -> JSON:
    """The snapshot of `agent` a session keeps, with a session's per-session overrides."""
    snapshot = {key: copy.deepcopy(agent.get(key)) for key in _SNAPSHOT_FIELDS}
    snapshot.update(copy.deepcopy(overrides or {}))
    _check_mcp_refs(snapshot, "agent")
    return snapshot


def _toolset_tool(toolset: JSON, name: str) -> tuple[bool, str]:
    for config in toolset["configs"]:
        if config["name"] == name:
            return config["enabled"], config["permission_policy"]["type"]
    default = toolset["default_config"]
    return default["enabled"], default["permission_policy"]["type"]


def tool_policy(tools: Sequence[JSON], name: str, *,
                mcp_server_name: str | None = None) -> tuple[bool, str] | None:
    """(enabled, permission policy type) of a built-in tool, or of an MCP tool when
    `mcp_server_name` is given; None when no toolset of the agent offers it. Custom tools
    answer None: the client runs them, so no policy governs them."""
    for tool in tools:
        if mcp_server_name is None and tool["type"] == AGENT_TOOLSET:
            return _toolset_tool(tool, name)
        if tool["type"] == "mcp_toolset" and tool["mcp_server_name"] == mcp_server_name:
            return _toolset_tool(tool, name)
    return None


def custom_tool_names(tools: Sequence[JSON]) -> list[str]:
    """The names of the agent's custom tools: calls the client answers."""
    return [tool["name"] for tool in tools if tool["type"] == "custom"]


# Environments -------------------------------------------------------------------------------

def _limited_network(obj: JSON, path: str) -> JSON:
    return {"type": "limited",
            "allow_mcp_servers": _get(obj, "allow_mcp_servers", path, _bool, False),
            "allow_package_managers": _get(obj, "allow_package_managers", path, _bool, False),
            "allowed_hosts": _get(obj, "allowed_hosts", path, _strs, [])}


_NETWORKS: Final[Mapping[str, Parser]] = {
    "unrestricted": lambda obj, path: {"type": "unrestricted"}, "limited": _limited_network}
_PACKAGE_MANAGERS: Final = ("apt", "cargo", "gem", "go", "npm", "pip")


def _packages(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    if obj.get("type") is not None:
        _choice(obj["type"], _at(path, "type"), ("packages",))
    return {"type": "packages",
            **{key: _get(obj, key, path, _strs, []) for key in _PACKAGE_MANAGERS}}


def _cloud(obj: JSON, path: str) -> JSON:
    return {"type": "cloud",
            "networking": _get(obj, "networking", path, lambda v, p: _variant(v, p, _NETWORKS),
                               {"type": "unrestricted"}),
            "packages": _get(obj, "packages", path, _packages, None)
            or _packages({}, _at(path, "packages"))}


_CONFIGS: Final[Mapping[str, Parser]] = {
    "cloud": _cloud, "self_hosted": lambda obj, path: {"type": "self_hosted"}}


def _config(value: object, path: str) -> JSON:
    return _variant(value, path, _CONFIGS)


def _scope(value: object, path: str) -> str:
    return _choice(value, path, ("organization", "account"))


def environment_create(body: object) -> JSON:
    """The body of `POST /v1/environments`, normalised (no config: a default cloud one)."""
    obj = _obj(body, "")
    return {
        "name": _str(_required(obj, "name", ""), "name", empty=False),
        "config": _get(obj, "config", "", _config) or _cloud({}, "config"),
        "description": _get(obj, "description", "", _str),
        "metadata": _get(obj, "metadata", "", _metadata, {}),
        "scope": _get(obj, "scope", "", _scope, "organization"),
    }


def environment_update(body: object) -> JSON:
    """The body of `POST /v1/environments/{id}`: only the fields it sets. A null name,
    config or scope keeps the stored one; a null description clears it."""
    obj = _obj(body, "")
    patch: JSON = {}
    readers: dict[str, Callable[[Any, str], Any]] = {
        "name": lambda v, p: _str(v, p, empty=False), "config": _config, "scope": _scope,
        "metadata": lambda v, p: _metadata(v, p, patch=True)}
    for key, read in readers.items():
        if obj.get(key) is not None:
            patch[key] = read(obj[key], key)
    if "description" in obj:
        patch["description"] = _opt_str(obj["description"], "description")
    return patch


def environment_document(fields: JSON, *, environment_id: str | None = None,
                         now: str | None = None) -> JSON:
    """A new environment (BetaEnvironment) from `environment_create`'s fields."""
    now = now or timestamp()
    return {"id": environment_id or new_id("env"), "type": "environment",
            **copy.deepcopy(fields), "created_at": now, "updated_at": now, "archived_at": None}


def environment_updated(doc: JSON, patch: JSON, *, now: str | None = None) -> JSON:
    """`doc` with `environment_update`'s patch applied (a metadata value of null or ""
    deletes its key, as the API documents for environments)."""
    new = copy.deepcopy(doc)
    for key, value in patch.items():
        new[key] = (_patch_metadata(doc.get("metadata") or {}, value, empty_deletes=True)
                    if key == "metadata" else copy.deepcopy(value))
    new["updated_at"] = now or timestamp()
    return new


def deleted_environment(environment_id: str) -> JSON:
    """The body of `DELETE /v1/environments/{id}`."""
    return {"id": environment_id, "type": "environment_deleted"}


# Sessions -----------------------------------------------------------------------------------

def _version(value: object, path: str) -> int:
    return _int(value, path, 1)


# What `agent_with_overrides` may replace, and how each reads.
_OVERRIDES: Final[Mapping[str, Callable[[Any, str], Any]]] = {
    "model": _model, "system": _opt_str, "tools": _tools, "mcp_servers": _mcp_servers,
    "skills": _skills}


def _agent_ref(value: object, path: str) -> JSON:
    """The session's `agent` param: an id (latest version), `{"type": "agent", "id",
    "version"?}` or `{"type": "agent_with_overrides", ...}`, as {"id", "version" (None:
    latest), "overrides"}."""
    if isinstance(value, str):
        return {"id": _str(value, path, empty=False), "version": None, "overrides": {}}
    obj = _obj(value, path)
    kind = _choice(obj.get("type"), _at(path, "type"), ("agent", "agent_with_overrides"))
    overrides: JSON = {}
    if kind == "agent_with_overrides":
        for key, read in _OVERRIDES.items():
            if key in obj and (obj[key] is not None or key == "system"):
                overrides[key] = read(obj[key], _at(path, key))
    return {"id": _str(_required(obj, "id", path), _at(path, "id"), empty=False),
            "version": _get(obj, "version", path, _version), "overrides": overrides}


def _budget(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    _choice(obj.get("type"), _at(path, "type"), ("limit",))
    where = _at(path, "max_list_cost")
    cost = _obj(_required(obj, "max_list_cost", path), where)
    amount = _str(_required(cost, "amount", where), _at(where, "amount"))
    if not _AMOUNT.match(amount):
        raise ShapeError(_at(where, "amount"), "expected a decimal amount such as \"12.50\"")
    _choice(cost.get("currency"), _at(where, "currency"), ("USD",))
    return {"type": "limit", "max_list_cost": {"amount": amount, "currency": "USD"}}


def _initial_events(value: object, path: str) -> list[JSON]:
    events = _items(value, path, lambda v, p: client_event(
        v, p, kinds=("user.message", "user.define_outcome")))
    if len(events) > _MAX_INITIAL_EVENTS:
        raise ShapeError(path, f"more than {_MAX_INITIAL_EVENTS} events")
    return events


def _no_resources(value: object, path: str) -> list[JSON]:
    if _list(value, path):
        raise ShapeError(path, "session resources are not supported by this server")
    return []


def session_create(body: object) -> JSON:
    """The body of `POST /v1/sessions`, normalised. `agent` is a reference the caller
    resolves (then `session_agent`); `initial_events` are client events to append."""
    obj = _obj(body, "")
    return {
        "agent": _agent_ref(_required(obj, "agent", ""), "agent"),
        "environment_id": _str(_required(obj, "environment_id", ""), "environment_id",
                               empty=False),
        "title": _get(obj, "title", "", _str),
        "metadata": _get(obj, "metadata", "", _metadata, {}),
        "vault_ids": _get(obj, "vault_ids", "", _strs, []),
        "budget": _get(obj, "budget", "", _budget),
        "resources": _get(obj, "resources", "", _no_resources, []),
        "initial_events": _get(obj, "initial_events", "", _initial_events, []),
    }


def _session_agent_patch(value: object, path: str) -> JSON:
    obj = _obj(value, path)
    return {key: read(obj[key], _at(path, key))
            for key, read in (("tools", _tools), ("mcp_servers", _mcp_servers))
            if obj.get(key) is not None}


def session_update(body: object) -> JSON:
    """The body of `POST /v1/sessions/{id}`: only the fields it sets. A null budget removes
    it; a null title clears it; `vault_ids` is refused, as the API refuses it."""
    obj = _obj(body, "")
    patch: JSON = {}
    if obj.get("agent") is not None:
        patch["agent"] = _session_agent_patch(obj["agent"], "agent")
    if "budget" in obj:
        patch["budget"] = _get(obj, "budget", "", _budget)
    if obj.get("metadata") is not None:
        patch["metadata"] = _metadata(obj["metadata"], "metadata", patch=True)
    if "title" in obj:
        patch["title"] = _opt_str(obj["title"], "title")
    if obj.get("vault_ids") is not None:
        raise ShapeError("vault_ids", "cannot be changed after the session is created")
    return patch


def _zero_usage() -> JSON:
    return {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def session_document(fields: JSON, agent: JSON, *, session_id: str | None = None,
                     now: str | None = None) -> JSON:
    """A new session (BetaManagedAgentsSession), idle, from `session_create`'s fields and
    the agent snapshot (`session_agent`)."""
    now = now or timestamp()
    return {
        "id": session_id or new_id("sesn"), "type": "session", "agent": copy.deepcopy(agent),
        "environment_id": fields["environment_id"], "title": fields.get("title"),
        "metadata": dict(fields.get("metadata") or {}),
        "vault_ids": list(fields.get("vault_ids") or []),
        "budget": copy.deepcopy(fields.get("budget")), "status": "idle",
        "resources": [], "outcome_evaluations": [],
        "stats": {"active_seconds": 0.0, "duration_seconds": 0.0}, "usage": _zero_usage(),
        "deployment_id": None, "created_at": now, "updated_at": now, "archived_at": None,
    }


def session_updated(doc: JSON, patch: JSON, *, now: str | None = None) -> JSON:
    """`doc` with `session_update`'s patch applied."""
    new = copy.deepcopy(doc)
    for key, value in patch.items():
        if key == "metadata":
            new[key] = _patch_metadata(doc.get("metadata") or {}, value)
        elif key == "agent":
            new["agent"].update(copy.deepcopy(value))
            _check_mcp_refs(new["agent"], "agent")
        else:
            new[key] = copy.deepcopy(value)
    new["updated_at"] = now or timestamp()
    return new


def session_status(doc: JSON, status: str, *, now: str | None = None) -> JSON:
    """`doc` in another status (one of SESSION_STATUSES)."""
    _choice(status, "status", SESSION_STATUSES)
    return {**doc, "status": status, "updated_at": now or timestamp()}


def session_usage_added(doc: JSON, usage: Mapping[str, Any]) -> JSON:
    """`doc` with one model request's usage (Messages API names) added to its totals."""
    total = copy.deepcopy(doc["usage"])
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens"):
        total[key] = (total.get(key) or 0) + int(usage.get(key) or 0)
    cache = total.setdefault("cache_creation", {})
    cache["ephemeral_5m_input_tokens"] = ((cache.get("ephemeral_5m_input_tokens") or 0)
                                          + int(usage.get("cache_creation_input_tokens") or 0))
    return {**doc, "usage": total}


def deleted_session(session_id: str) -> JSON:
    """The body of `DELETE /v1/sessions/{id}`."""
    return {"id": session_id, "type": "session_deleted"}


def archived(doc: JSON, *, now: str | None = None) -> JSON:
    """An agent, environment or session archived now (`POST .../archive`)."""
    now = now or timestamp()
    return {**doc, "archived_at": now, "updated_at": now}


# Content blocks -----------------------------------------------------------------------------

def _text_block(obj: JSON, path: str) -> JSON:
    return {"type": "text", "text": _str(_required(obj, "text", path), _at(path, "text"))}


def _base64_source(obj: JSON, path: str) -> JSON:
    return {"type": "base64",
            "media_type": _str(_required(obj, "media_type", path), _at(path, "media_type")),
            "data": _str(_required(obj, "data", path), _at(path, "data"))}


def _url_source(obj: JSON, path: str) -> JSON:
    return {"type": "url", "url": _str(_required(obj, "url", path), _at(path, "url"))}


def _file_source(obj: JSON, path: str) -> JSON:
    return {"type": "file",
            "file_id": _str(_required(obj, "file_id", path), _at(path, "file_id"))}


def _plain_text_source(obj: JSON, path: str) -> JSON:
    if obj.get("media_type") is not None:
        _choice(obj["media_type"], _at(path, "media_type"), ("text/plain",))
    return {"type": "text", "media_type": "text/plain",
            "data": _str(_required(obj, "data", path), _at(path, "data"))}


_IMAGE_SOURCES: Final[Mapping[str, Parser]] = {
    "base64": _base64_source, "url": _url_source, "file": _file_source}
_DOCUMENT_SOURCES: Final[Mapping[str, Parser]] = {**_IMAGE_SOURCES, "text": _plain_text_source}


def _image_block(obj: JSON, path: str) -> JSON:
    where = _at(path, "source")
    return {"type": "image",
            "source": _variant(_required(obj, "source", path), where, _IMAGE_SOURCES)}


def _document_block(obj: JSON, path: str) -> JSON:
    where = _at(path, "source")
    block = {"type": "document",
             "source": _variant(_required(obj, "source", path), where, _DOCUMENT_SOURCES)}
    for key in ("title", "context"):
        if obj.get(key) is not None:
            block[key] = _str(obj[key], _at(path, key))
    return block


def _search_result_block(obj: JSON, path: str) -> JSON:
    citations = _get(obj, "citations", path, _obj, {})
    return {"type": "search_result",
            "source": _str(_required(obj, "source", path), _at(path, "source")),
            "title": _str(_required(obj, "title", path), _at(path, "title")),
            "content": _items(_required(obj, "content", path), _at(path, "content"),
                              lambda v, p: _variant(v, p, {"text": _text_block})),
            "citations": {"enabled": _get(citations, "enabled", _at(path, "citations"),
                                          _bool, False)}}


_MESSAGE_BLOCKS: Final[Mapping[str, Parser]] = {
    "text": _text_block, "image": _image_block, "document": _document_block,
    "redacted": lambda obj, path: {"type": "redacted"}}
_RESULT_BLOCKS: Final[Mapping[str, Parser]] = {
    "text": _text_block, "image": _image_block, "document": _document_block,
    "search_result": _search_result_block}


def _blocks(value: object, path: str, kinds: Mapping[str, Parser]) -> list[JSON]:
    return _items(value, path, lambda v, p: _variant(v, p, kinds))


# Client events ------------------------------------------------------------------------------

def _user_message(obj: JSON, path: str) -> JSON:
    return {"type": "user.message",
            "content": _blocks(_required(obj, "content", path), _at(path, "content"),
                               _MESSAGE_BLOCKS)}


def _user_interrupt(obj: JSON, path: str) -> JSON:
    event: JSON = {"type": "user.interrupt"}
    if obj.get("session_thread_id") is not None:
        event["session_thread_id"] = _str(obj["session_thread_id"],
                                          _at(path, "session_thread_id"))
    return event


def _tool_confirmation(obj: JSON, path: str) -> JSON:
    return {"type": "user.tool_confirmation",
            "tool_use_id": _str(_required(obj, "tool_use_id", path),
                                _at(path, "tool_use_id"), empty=False),
            "result": _choice(obj.get("result"), _at(path, "result"), ("allow", "deny")),
            "deny_message": _get(obj, "deny_message", path, _str)}


def _result_fields(obj: JSON, path: str) -> JSON:
    return {"content": _get(obj, "content", path,
                            lambda v, p: _blocks(v, p, _RESULT_BLOCKS), []),
            "is_error": _get(obj, "is_error", path, _bool, False)}


def _custom_tool_result(obj: JSON, path: str) -> JSON:
    return {"type": "user.custom_tool_result",
            "custom_tool_use_id": _str(_required(obj, "custom_tool_use_id", path),
                                       _at(path, "custom_tool_use_id"), empty=False),
            **_result_fields(obj, path)}


def _tool_result(obj: JSON, path: str) -> JSON:
    return {"type": "user.tool_result",
            "tool_use_id": _str(_required(obj, "tool_use_id", path),
                                _at(path, "tool_use_id"), empty=False),
            **_result_fields(obj, path)}


_RUBRICS: Final[Mapping[str, Parser]] = {
    "file": _file_source,
    "text": lambda obj, path: {"type": "text", "content": _str(
        _required(obj, "content", path), _at(path, "content"))}}


def _define_outcome(obj: JSON, path: str) -> JSON:
    return {"type": "user.define_outcome",
            "description": _str(_required(obj, "description", path), _at(path, "description")),
            "rubric": _variant(_required(obj, "rubric", path), _at(path, "rubric"), _RUBRICS),
            "max_iterations": _get(obj, "max_iterations", path,
                                   lambda v, p: _int(v, p, 1, 20), 3)}


def _system_message(obj: JSON, path: str) -> JSON:
    return {"type": "system.message",
            "content": _blocks(_required(obj, "content", path), _at(path, "content"),
                               {"text": _text_block})}


_CLIENT_EVENTS: Final[Mapping[str, Parser]] = {
    "user.message": _user_message, "user.interrupt": _user_interrupt,
    "user.tool_confirmation": _tool_confirmation,
    "user.custom_tool_result": _custom_tool_result, "user.define_outcome": _define_outcome,
    "user.tool_result": _tool_result, "system.message": _system_message}


def client_event(value: object, path: str = "event",
                 kinds: Sequence[str] = CLIENT_EVENT_TYPES) -> JSON:
    """One event a client may post (its params, no id yet), normalised."""
    return _variant(value, path, {kind: _CLIENT_EVENTS[kind] for kind in kinds})


def send_events(body: object) -> list[JSON]:
    """The body of `POST /v1/sessions/{id}/events` (`{"events": [...]}`), normalised."""
    obj = _obj(body, "")
    events = _items(_required(obj, "events", ""), "events", client_event)
    if not events:
        raise ShapeError("events", "must not be empty")
    return events


def client_event_record(params: JSON, *, processed_at: str | None = None) -> JSON:
    """A posted event as the log and the stream carry it: with its server `id`, and
    `processed_at` null while queued. `user.define_outcome` is accepted on receipt, so it
    gets its `outcome_id` (`outc_…`) and a `processed_at` at once."""
    record = {"id": new_id("sevt"), **copy.deepcopy(params), "processed_at": processed_at}
    if params["type"] == "user.define_outcome":
        record["outcome_id"] = new_id("outc")
        record["processed_at"] = processed_at or timestamp()
    return record


def processed(event: JSON, *, now: str | None = None) -> JSON:
    """The second appearance of a client event: the agent has consumed it."""
    return {**event, "processed_at": now or timestamp()}


def send_events_response(records: Sequence[JSON]) -> JSON:
    """The body answering `POST /v1/sessions/{id}/events`."""
    return {"data": list(records)}


# Server events ------------------------------------------------------------------------------

def _event(kind: str, event_id: str | None = None, **fields: Any) -> JSON:
    return {"id": event_id or new_id("sevt"), "type": kind, **fields,
            "processed_at": timestamp()}


def _content(content: str | Sequence[JSON]) -> list[JSON]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(block) for block in content]


def agent_message(content: str | Sequence[JSON], *, event_id: str | None = None) -> JSON:
    """`agent.message`: text blocks (a string is one). `event_id` is the id an
    `event_start` preview announced."""
    return _event("agent.message", event_id, content=_content(content))


def agent_thinking(*, event_id: str | None = None) -> JSON:
    """`agent.thinking`: a progress signal only; it carries no thinking text."""
    return _event("agent.thinking", event_id)


def _evaluation(policy: str | None, permission: str, reason_code: str) -> JSON | None:
    if policy is None:
        return None  # refused before any policy applied (e.g. the tool is disabled)
    if policy != "auto":
        return {"type": policy}
    verdict: JSON = {"type": permission}
    if permission != "allow":
        verdict["reason_code"] = reason_code
    return {"type": "auto", "evaluated_permission": verdict}


_PERMISSION_OF: Final = {"always_allow": "allow", "always_ask": "ask"}


def _permission(policy: str | None, permission: str | None) -> str:
    chosen = permission or _PERMISSION_OF.get(policy or "")
    if chosen not in ("allow", "ask", "deny"):
        raise ValueError("a tool call under the auto policy (or no policy) needs a permission")
    return chosen


def agent_tool_use(name: str, tool_input: Mapping[str, Any], *,
                   policy: str | None = "always_allow", permission: str | None = None,
                   reason_code: str = "policy") -> JSON:
    """`agent.tool_use` (a built-in tool). `evaluated_permission` follows `policy`
    (always_allow: allow, always_ask: ask) unless `permission` says otherwise; the SDK's
    tool runner holds an `ask` call until its `user.tool_confirmation`. Its id is the
    `tool_use_id` the result and the confirmation name."""
    verdict = _permission(policy, permission)
    event = _event("agent.tool_use", name=name, input=dict(tool_input),
                   evaluated_permission=verdict)
    evaluation = _evaluation(policy, verdict, reason_code)
    if evaluation is not None:
        event["evaluation"] = evaluation
    return event


def agent_tool_result(tool_use_id: str, content: str | Sequence[JSON], *,
                      is_error: bool = False) -> JSON:
    """`agent.tool_result`: the result of a built-in tool the server ran itself."""
    return _event("agent.tool_result", tool_use_id=tool_use_id, content=_content(content),
                  is_error=is_error)


def agent_custom_tool_use(name: str, tool_input: Mapping[str, Any]) -> JSON:
    """`agent.custom_tool_use`: the client answers with `user.custom_tool_result` naming
    this event's id as `custom_tool_use_id`."""
    return _event("agent.custom_tool_use", name=name, input=dict(tool_input))


def agent_mcp_tool_use(mcp_server_name: str, name: str, tool_input: Mapping[str, Any], *,
                       policy: str | None = "always_ask", permission: str | None = None,
                       reason_code: str = "policy") -> JSON:
    """`agent.mcp_tool_use`: a tool of an MCP server the server calls itself."""
    verdict = _permission(policy, permission)
    event = _event("agent.mcp_tool_use", mcp_server_name=mcp_server_name, name=name,
                   input=dict(tool_input), evaluated_permission=verdict)
    evaluation = _evaluation(policy, verdict, reason_code)
    if evaluation is not None:
        event["evaluation"] = evaluation
    return event


def agent_mcp_tool_result(mcp_tool_use_id: str, content: str | Sequence[JSON], *,
                          is_error: bool = False) -> JSON:
    """`agent.mcp_tool_result`."""
    return _event("agent.mcp_tool_result", mcp_tool_use_id=mcp_tool_use_id,
                  content=_content(content), is_error=is_error)


def agent_context_compacted() -> JSON:
    """`agent.thread_context_compacted`: the conversation was summarised."""
    return _event("agent.thread_context_compacted")


def status_running() -> JSON:
    """`session.status_running`."""
    return _event("session.status_running")


def status_idle(stop_reason: str = "end_turn", *, event_ids: Sequence[str] = ()) -> JSON:
    """`session.status_idle`. `requires_action` names the events the session waits on
    (tool calls awaiting a result or a confirmation); only it keeps the turn open for the
    SDK's tool runner."""
    _choice(stop_reason, "stop_reason", STOP_REASONS)
    reason: JSON = {"type": stop_reason}
    if stop_reason == "requires_action":
        if not event_ids:
            raise ValueError("requires_action names the events it waits on")
        reason["event_ids"] = list(event_ids)
    return _event("session.status_idle", stop_reason=reason)


def status_rescheduled() -> JSON:
    """`session.status_rescheduled`: a transient failure; the session retries."""
    return _event("session.status_rescheduled")


def status_terminated() -> JSON:
    """`session.status_terminated`: the end, whether by error or by completion."""
    return _event("session.status_terminated")


def session_deleted_event() -> JSON:
    """`session.deleted`: the last event a stream of a deleted session carries."""
    return _event("session.deleted")


def session_updated_event(changes: Mapping[str, Any]) -> JSON:
    """`session.updated`, carrying the changed fields among agent, budget, metadata and
    title (a removed budget is `budget: null`)."""
    fields = {k: copy.deepcopy(v) for k, v in changes.items()
              if k in ("agent", "budget", "metadata", "title")}
    return _event("session.updated", **fields)


def session_error(kind: str, message: str, *, retry_status: str = "terminal",
                  mcp_server_name: str | None = None,
                  repository_url: str | None = None) -> JSON:
    """`session.error`. `retry_status` says what happens next: `retrying`, `exhausted` or
    `terminal`. The MCP errors name their server."""
    _choice(kind, "kind", SESSION_ERROR_TYPES)
    _choice(retry_status, "retry_status", ("retrying", "exhausted", "terminal"))
    error: JSON = {"type": kind, "message": message, "retry_status": {"type": retry_status}}
    if kind.startswith("mcp_"):
        if mcp_server_name is None:
            raise ValueError(f"{kind} names its MCP server")
        error["mcp_server_name"] = mcp_server_name
    if kind.startswith("repository_"):
        error["repository_url"] = repository_url
    return _event("session.error", error=error)


def session_usage(usage: Mapping[str, Any], budget: JSON | None = None) -> JSON:
    """`session.usage`: the session's cumulative usage (its document's `usage`)."""
    return _event("session.usage", usage=copy.deepcopy(dict(usage)),
                  budget=copy.deepcopy(budget))


def model_request_start() -> JSON:
    """`span.model_request_start`; its id is the `model_request_start_id` of the end."""
    return _event("span.model_request_start")


def model_request_end(model_request_start_id: str, usage: Mapping[str, Any] | None = None,
                      *, is_error: bool = False) -> JSON:
    """`span.model_request_end`, with the request's usage in Messages API names."""
    usage = usage or {}
    model_usage = {key: int(usage.get(key) or 0)
                   for key in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                               "cache_creation_input_tokens")}
    if usage.get("speed") in ("standard", "fast"):
        model_usage["speed"] = usage["speed"]
    return _event("span.model_request_end", model_request_start_id=model_request_start_id,
                  model_usage=model_usage, is_error=is_error)


def event_start(event_id: str, kind: str = "agent.message") -> JSON:
    """A preview's opening (`event_deltas` streams only; never in the log): the id the
    buffered `agent.message`/`agent.thinking` will carry."""
    _choice(kind, "kind", ("agent.message", "agent.thinking"))
    return {"type": "event_start", "event": {"id": event_id, "type": kind}}


def event_delta(event_id: str, text: str, *, index: int | None = 0) -> JSON:
    """A fragment of a previewed `agent.message`: text appended to its content[index]."""
    delta: JSON = {"type": "content_delta", "content": {"type": "text", "text": text}}
    if index is not None:
        delta["index"] = index
    return {"type": "event_delta", "event_id": event_id, "delta": delta}


# Lists, query strings, errors, SSE ---------------------------------------------------------

def list_page(data: Sequence[JSON], next_page: str | None = None) -> JSON:
    """The list envelope (SyncPageCursor): the SDK asks for the next page with
    `?page=<next_page>` (and the first query's other parameters) until it is null."""
    return {"data": list(data), "next_page": next_page}


def session_list_page(data: Sequence[JSON], next_page: str | None = None,
                      prev_page: str | None = None) -> JSON:
    """The sessions list envelope (SyncBidirectionalPageCursor): also `prev_page`."""
    return {"data": list(data), "next_page": next_page, "prev_page": prev_page}


Query = Mapping[str, Sequence[str]]


def _one(query: Query, key: str) -> str | None:
    values = query.get(key) or ()
    return values[-1] if values else None


def _many(query: Query, key: str) -> list[str]:
    # The SDK sends arrays as `key[]=a&key[]=b`; plain repeats are accepted too.
    return [*(query.get(key + "[]") or ()), *(query.get(key) or ())]


def _limit(query: Query, default: int, ceiling: int) -> int:
    raw = _one(query, "limit")
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ShapeError("limit", "expected a positive integer")
    return min(int(raw), ceiling)  # more than a page holds: the cursor brings the rest


def _flag(query: Query, key: str) -> bool:
    raw = (_one(query, key) or "false").lower()
    return _choice(raw, key, ("true", "false")) == "true"


def _created(query: Query) -> JSON:
    bounds: JSON = {}
    for op in ("gt", "gte", "lt", "lte"):
        raw = _one(query, f"created_at[{op}]")
        if raw is not None:
            bounds[f"created_{op}"] = instant(raw, f"created_at[{op}]",
                                              round_up=op in ("gte", "lt"))
    return bounds


def resources_query(query: Query, *, default_limit: int = 20, max_limit: int = 100) -> JSON:
    """`limit`, `page`, `include_archived` (and the created_at bounds) of an agents or
    environments list, newest first."""
    return {"limit": _limit(query, default_limit, max_limit), "page": _one(query, "page"),
            "include_archived": _flag(query, "include_archived"), "order": "desc",
            **_created(query)}


def sessions_query(query: Query) -> JSON:
    """The sessions list's query: also `order` (default desc), `statuses[]`, `agent_id`,
    `agent_version`."""
    out = resources_query(query)
    out["order"] = _choice(_one(query, "order") or "desc", "order", ("asc", "desc"))
    out["statuses"] = [_choice(s, "statuses", SESSION_STATUSES) for s in _many(query, "statuses")]
    out["agent_id"] = _one(query, "agent_id")
    version = _one(query, "agent_version")
    if version is not None and not (version.isdigit() and int(version) >= 1):
        raise ShapeError("agent_version", "expected a positive integer")
    out["agent_version"] = None if version is None else int(version)
    return out


def events_query(query: Query) -> JSON:
    """The events list's query: `limit` (default and ceiling 1000: the SDK's tool runner
    asks for 1000), `page`, `order` (default asc), `types[]`, `created_at[...]`."""
    return {"limit": _limit(query, 1000, 1000), "page": _one(query, "page"),
            "order": _choice(_one(query, "order") or "asc", "order", ("asc", "desc")),
            "types": [_choice(t, "types", EVENT_TYPES) for t in _many(query, "types")] or None,
            **_created(query)}


def stream_query(query: Query) -> list[str]:
    """The `event_deltas[]` of a stream request: the event types to preview."""
    return [_choice(t, "event_deltas", ("agent.message", "agent.thinking"))
            for t in _many(query, "event_deltas")]


# The `error.type` of each status (ErrorResponse); others are api_error.
_ERROR_TYPES: Final = {400: "invalid_request_error", 401: "authentication_error",
                       402: "billing_error", 403: "permission_error", 404: "not_found_error",
                       408: "timeout_error", 409: "invalid_request_error",
                       412: "invalid_request_error", 413: "request_too_large",
                       422: "invalid_request_error", 429: "rate_limit_error",
                       504: "timeout_error", 529: "overloaded_error"}


def error_body(status: int, message: str, *, error_code: str | None = None,
               request_id: str | None = None) -> JSON:
    """An error response body. The SDK picks its exception class from the status, and a
    narrower one from (status, `error.details.error_code`) when it knows the code
    (`environment_archived` on a 400 is BetaEnvironmentArchivedError)."""
    error: JSON = {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return {"type": "error", "error": error, "request_id": request_id}


def sse_frame(event: Mapping[str, Any], *, seq: int | None = None) -> bytes:
    """One event on the stream. The SDK drops a frame without an `event:` line, so every
    frame names its type there; `id:` is the log's seq when there is one."""
    head = f"id: {seq}\n" if seq is not None else ""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return encode_utf8(f"{head}event: {event['type']}\ndata: {data}\n\n")


def sse_error(status: int, message: str) -> bytes:
    """An error mid-stream. The SDK raises it as a plain APIStatusError (its class comes
    from the HTTP status, 200 by then); `status` only picks the body's `error.type`."""
    data = json.dumps(error_body(status, message), separators=(",", ":"))
    return encode_utf8(f"event: error\ndata: {data}\n\n")


SSE_PING: Final = b"event: ping\ndata: {\"type\":\"ping\"}\n\n"
