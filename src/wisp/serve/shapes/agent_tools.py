"""An agent's `tools` and `mcp_servers`: the built-in toolset, MCP toolsets and custom
tools as requests carry them, and what the server asks of them later (`tool_policy`,
`custom_tool_names`)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    Parser,
    ShapeError,
    check_unique,
    child_path,
    optional_field,
    read_bool,
    read_choice,
    read_int,
    read_items,
    read_object,
    read_str,
    read_strs,
    read_variant,
    required_field,
)

AGENT_TOOLSET: Final = "agent_toolset_20260401"
# The tools of `agent_toolset_20260401`, by the names they carry in `agent.tool_use`.
AGENT_TOOL_NAMES: Final = ("bash", "edit", "read", "write", "glob", "grep", "web_fetch",
                           "web_search")
POLICIES: Final = ("always_allow", "always_ask", "auto")


_MAX_TOOLS = 256
_MAX_MCP_SERVERS = 20
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}\Z")


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


# Toolsets, custom tools, MCP servers ---------------------------------------------------------

def _policy(value: object, path: str, default: JSON) -> JSON:
    if value is None:
        return dict(default)
    return {"type": read_choice(read_object(value, path).get("type"), child_path(path, "type"),
                                POLICIES)}


def _default_config(value: object, path: str, policy: str) -> JSON:
    obj = {} if value is None else read_object(value, path)
    return _override(obj, path, {"enabled": True, "permission_policy": {"type": policy}})


def _override(obj: JSON, path: str, default: JSON) -> JSON:
    """`enabled` and `permission_policy`, each falling back to the toolset's default."""
    return {
        "enabled": optional_field(obj, "enabled", path, read_bool, default["enabled"]),
        "permission_policy": _policy(obj.get("permission_policy"),
                                     child_path(path, "permission_policy"),
                                     default["permission_policy"]),
    }


def _web_options(obj: JSON, path: str, name: str) -> JSON:
    """The extra settings of the two web tools, kept as given once their types check."""
    out: JSON = {}
    for key in ("allowed_domains", "blocked_domains"):
        if obj.get(key) is not None:
            out[key] = read_strs(obj[key], child_path(path, key))
    extra = {"web_fetch": ("max_content_tokens", "url_sources"),
             "web_search": ("user_location",)}[name]
    for key in extra:
        if obj.get(key) is None:
            continue
        where = child_path(path, key)
        out[key] = (read_int(obj[key], where, 1) if key == "max_content_tokens"
                    else copy.deepcopy(read_object(obj[key], where)))
    return out


def _toolset_config(value: object, path: str, default: JSON) -> JSON:
    obj = read_object(value, path)
    name = read_choice(obj.get("name"), child_path(path, "name"), AGENT_TOOL_NAMES)
    if obj.get("type") is not None:
        read_choice(obj["type"], child_path(path, "type"), (name,))
    out = {"name": name, "type": name, **_override(obj, path, default)}
    if name in ("web_fetch", "web_search"):
        out.update(_web_options(obj, path, name))
    return out


def _agent_toolset(obj: JSON, path: str) -> JSON:
    # Omitting default_config enables every tool under always_allow.
    default = _default_config(obj.get("default_config"), child_path(path, "default_config"),
                              "always_allow")
    where = child_path(path, "configs")
    configs = read_items(obj.get("configs") or [], where,
                         lambda v, p: _toolset_config(v, p, default))
    check_unique([c["name"] for c in configs], where, "tool")
    return {"type": AGENT_TOOLSET, "default_config": default, "configs": configs}


def _mcp_tool_config(value: object, path: str, default: JSON) -> JSON:
    obj = read_object(value, path)
    name = read_str(required_field(obj, "name", path), child_path(path, "name"), empty=False)
    return {"name": name, **_override(obj, path, default)}


def _mcp_toolset(obj: JSON, path: str) -> JSON:
    server = read_str(required_field(obj, "mcp_server_name", path),
                      child_path(path, "mcp_server_name"),
                      empty=False)
    # MCP toolsets default to always_ask: a server may grow tools nobody reviewed.
    default = _default_config(obj.get("default_config"), child_path(path, "default_config"),
                              "always_ask")
    where = child_path(path, "configs")
    configs = read_items(obj.get("configs") or [], where,
                         lambda v, p: _mcp_tool_config(v, p, default))
    check_unique([c["name"] for c in configs], where, "tool")
    return {"type": "mcp_toolset", "mcp_server_name": server, "default_config": default,
            "configs": configs}


def _input_schema(value: object, path: str) -> JSON:
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("object",))
    optional_field(obj, "properties", path, read_object)
    optional_field(obj, "required", path, read_strs)
    return copy.deepcopy(obj)  # a JSON Schema: every keyword of it is meaningful


def _custom_tool(obj: JSON, path: str) -> JSON:
    name = read_str(required_field(obj, "name", path), child_path(path, "name"))
    if not _TOOL_NAME.match(name):
        raise ShapeError(child_path(path, "name"), "expected 1-128 letters, digits, '_' or '-'")
    return {
        "type": "custom",
        "name": name,
        "description": read_str(required_field(obj, "description", path),
                                child_path(path, "description")),
        "input_schema": _input_schema(required_field(obj, "input_schema", path),
                                      child_path(path, "input_schema")),
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


def read_tools(value: object, path: str) -> list[JSON]:
    tools = read_items(value, path, lambda v, p: read_variant(v, p, _TOOL_KINDS))
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
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("url",))
    return {"type": "url",
            "name": read_str(required_field(obj, "name", path), child_path(path, "name"),
                             empty=False),
            "url": read_str(required_field(obj, "url", path), child_path(path, "url"), empty=False)}


def read_mcp_servers(value: object, path: str) -> list[JSON]:
    servers = read_items(value, path, _mcp_server)
    if len(servers) > _MAX_MCP_SERVERS:
        raise ShapeError(path, f"more than {_MAX_MCP_SERVERS} servers")
    check_unique([s["name"] for s in servers], path, "server name")
    return servers


def check_mcp_refs(fields: Mapping[str, Any], path: str = "") -> None:
    """Every mcp_toolset names a server of mcp_servers, and every server is used."""
    names = [s["name"] for s in fields["mcp_servers"]]
    used: set[str] = set()
    for i, tool in enumerate(fields["tools"]):
        if tool["type"] == "mcp_toolset":
            if tool["mcp_server_name"] not in names:
                raise ShapeError(child_path(path, f"tools[{i}].mcp_server_name"),
                                 f'no mcp_servers entry is named "{tool["mcp_server_name"]}"')
            used.add(tool["mcp_server_name"])
    for i, name in enumerate(names):
        if name not in used:
            raise ShapeError(child_path(path, f"mcp_servers[{i}].name"),
                             "not used by any mcp_toolset in tools")


# Queries of a saved agent's tools --------------------------------------------------------------

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
