"""Agents: the `POST /v1/agents` and `POST /v1/agents/{id}` bodies (model, skills,
execution identity; tools come from `agent_tools`) and the agent documents."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from wisp.jsontypes import JSON
from wisp.serve.shapes.agent_tools import _check_mcp_refs, _mcp_servers, _tools
from wisp.serve.shapes.common import (
    ShapeError,
    _at,
    _choice,
    _get,
    _int,
    _items,
    _metadata,
    _obj,
    _opt_str,
    _patch_metadata,
    _required,
    _str,
    new_id,
    timestamp,
)
from wisp.serve.shapes.multiagent import multiagent

EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")
# The API resolves an omitted effort to a per-model default at save time; wisp has one.
DEFAULT_EFFORT: Final = "high"


# Model, skills, identity -----------------------------------------------------------------

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
        "multiagent": _get(obj, "multiagent", "", multiagent),
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
    "multiagent": (multiagent, "clear"),
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
