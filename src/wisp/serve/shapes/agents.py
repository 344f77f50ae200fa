"""Agents: the `POST /v1/agents` and `POST /v1/agents/{id}` bodies (model, skills,
execution identity; tools come from `agent_tools`) and the agent documents."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, Final, TypedDict, cast

from wisp.jsontypes import JSON
from wisp.serve.shapes.agent_tools import check_mcp_refs, read_mcp_servers, read_tools
from wisp.serve.shapes.common import (
    ShapeError,
    child_path,
    new_id,
    optional_field,
    patched_metadata,
    read_choice,
    read_int,
    read_items,
    read_metadata,
    read_object,
    read_optional_str,
    read_str,
    required_field,
    timestamp,
)
from wisp.serve.shapes.documents import (
    AgentDocument,
    AgentFields,
    Effort,
    ModelConfig,
    as_agent,
    editable,
)
from wisp.serve.shapes.multiagent import multiagent

EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")
# The API resolves an omitted effort to a per-model default at save time; wisp has one.
DEFAULT_EFFORT: Final = "high"


# Model, skills, identity -----------------------------------------------------------------

def _effort(value: object, path: str) -> Effort:
    # A bare level ("high") or the object form ({"type": "high"})
    if isinstance(value, dict):
        return {"type": read_choice(value.get("type"), child_path(path, "type"), EFFORTS)}
    return {"type": read_choice(value, path, EFFORTS)}


def read_model(value: object, path: str, *, fill: bool = True) -> ModelConfig:
    """The `model` param (an id string or a model_config object) as the response's
    model_config. `fill=False` leaves an omitted effort None, for an update to keep."""
    if isinstance(value, str):
        value = {"id": read_str(value, path, empty=False)}
    if not isinstance(value, dict):
        raise ShapeError(path, "expected a model id string or an object")
    obj = cast(JSON, value)
    effort: Effort | None = optional_field(obj, "effort", path, _effort)
    default: Effort | None = {"type": DEFAULT_EFFORT} if fill else None
    return {
        "id": read_str(required_field(obj, "id", path), child_path(path, "id"), empty=False),
        "effort": effort or default,
        "speed": optional_field(obj, "speed", path,
                                lambda v, p: read_choice(v, p, ("standard", "fast")),
                                "standard"),
        "inference_geo": optional_field(obj, "inference_geo", path, read_str),
    }


def _skill(value: object, path: str) -> JSON:
    obj = read_object(value, path)
    return {"type": read_choice(obj.get("type"), child_path(path, "type"), ("anthropic", "custom")),
            "skill_id": read_str(required_field(obj, "skill_id", path),
                                 child_path(path, "skill_id"),
                                 empty=False),
            "version": optional_field(obj, "version", path, read_str, "latest")}


def read_skills(value: object, path: str) -> list[JSON]:
    return read_items(value, path, _skill)


def _identity(value: object, path: str) -> JSON:
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), ("service_account", "aws_role"))
    if kind == "service_account":
        return {"type": kind}
    return {"type": kind, "role_arn": read_str(required_field(obj, "role_arn", path),
                                               child_path(path, "role_arn"), empty=False)}


_SERVICE_ACCOUNT: Final = {"type": "service_account"}


def _clearable_str(value: object, path: str) -> str | None:
    # On update an empty string clears the field like null does.
    return read_optional_str(value, path) or None


# Agents: requests and documents -------------------------------------------------------------

def agent_create(body: object) -> AgentFields:
    """The body of `POST /v1/agents`, normalised to the agent document's own fields."""
    obj = read_object(body, "")
    fields: AgentFields = {
        "name": read_str(required_field(obj, "name", ""), "name", empty=False),
        "model": read_model(required_field(obj, "model", ""), "model"),
        "description": optional_field(obj, "description", "", read_str),
        "system": optional_field(obj, "system", "", read_str),
        "metadata": optional_field(obj, "metadata", "", read_metadata, {}),
        "tools": optional_field(obj, "tools", "", read_tools, []),
        "mcp_servers": optional_field(obj, "mcp_servers", "", read_mcp_servers, []),
        "skills": optional_field(obj, "skills", "", read_skills, []),
        "execution_identity": optional_field(obj, "execution_identity", "", _identity,
                                             dict(_SERVICE_ACCOUNT)),
        "multiagent": optional_field(obj, "multiagent", "", multiagent),
    }
    check_mcp_refs(fields)
    return fields


class AgentPatch(TypedDict, total=False):
    """What `agent_update` returns: the fields the body sends, normalised (a cleared one
    None, a reset list empty); `version` is the version the client expects to replace."""

    name: str
    model: ModelConfig  # `effort` None when the body leaves it out: the stored one stays
    description: str | None
    system: str | None
    tools: list[JSON]
    mcp_servers: list[JSON]
    skills: list[JSON]
    execution_identity: JSON
    metadata: dict[str, str | None]  # a None value deletes its key
    multiagent: JSON | None
    version: int


# How each field of `POST /v1/agents/{id}` reads, and what its null means: None, refused;
# "clear", stored as null; "skip", ignored; anything else, that value.
_AGENT_PATCH: Final[Mapping[str, tuple[Callable[[Any, str], Any], Any]]] = {
    "name": (lambda v, p: read_str(v, p, empty=False), None),
    "model": (lambda v, p: read_model(v, p, fill=False), None),
    "description": (_clearable_str, "clear"),
    "system": (_clearable_str, "clear"),
    "tools": (read_tools, []),
    "mcp_servers": (read_mcp_servers, []),
    "skills": (read_skills, []),
    "execution_identity": (_identity, _SERVICE_ACCOUNT),
    "metadata": (lambda v, p: read_metadata(v, p, patch=True), {}),
    "multiagent": (multiagent, "clear"),
    "version": (lambda v, p: read_int(v, p, 1), "skip"),
}


def _patch_field(obj: JSON, key: str, read: Callable[[Any, str], Any], if_null: Any) -> Any:
    if obj[key] is not None:
        return read(obj[key], key)
    if if_null is None:
        raise ShapeError(key, "cannot be null")
    return None if if_null == "clear" else copy.deepcopy(if_null)


def agent_update(body: object) -> AgentPatch:
    """The body of `POST /v1/agents/{id}`: only the fields it sends, normalised. `version`,
    when present, is the version the client expects to replace (the caller compares)."""
    obj = read_object(body, "")
    patch: JSON = {}
    for key, (read, if_null) in _AGENT_PATCH.items():
        if key in obj and not (obj[key] is None and if_null == "skip"):
            patch[key] = _patch_field(obj, key, read, if_null)
    return cast(AgentPatch, patch)  # `_AGENT_PATCH`'s readers: tests/serve/test_body_types.py


def agent_document(fields: AgentFields, *, agent_id: str | None = None,
                   now: str | None = None) -> AgentDocument:
    """A new agent (BetaManagedAgentsAgent) from `agent_create`'s fields: version 1."""
    now = now or timestamp()
    return {"id": agent_id or new_id("agent"), "type": "agent", **copy.deepcopy(fields),
            "version": 1, "created_at": now, "updated_at": now, "archived_at": None}


def agent_updated(doc: AgentDocument, patch: AgentPatch, *,
                  now: str | None = None) -> AgentDocument:
    """`doc` with `agent_update`'s patch applied: a new version when anything changed."""
    new = editable(doc)
    fields: Mapping[str, Any] = patch
    for key, value in fields.items():
        if key == "metadata":
            new[key] = patched_metadata(doc.get("metadata") or {}, value)
        elif key == "model" and value["effort"] is None:
            new[key] = {**value, "effort": doc["model"].get("effort")}
        elif key != "version":
            new[key] = copy.deepcopy(value)
    check_mcp_refs(new)
    if new != doc:
        new["version"] = doc["version"] + 1
        new["updated_at"] = now or timestamp()
    return as_agent(new)
