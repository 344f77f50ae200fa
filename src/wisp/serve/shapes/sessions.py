"""Sessions: the `POST /v1/sessions` and `POST /v1/sessions/{id}` bodies, the agent
snapshot a session keeps, and the session documents (status, usage)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, TypedDict

from wisp.jsontypes import JSON
from wisp.serve.shapes.agent_tools import check_mcp_refs, read_mcp_servers, read_tools
from wisp.serve.shapes.agents import read_model, read_skills
from wisp.serve.shapes.client_events import ClientEvent, client_events
from wisp.serve.shapes.common import (
    ShapeError,
    child_path,
    new_id,
    optional_field,
    patched_metadata,
    read_choice,
    read_int,
    read_metadata,
    read_object,
    read_optional_str,
    read_str,
    read_strs,
    required_field,
    timestamp,
)
from wisp.serve.shapes.documents import (
    Metadata,
    SessionAgent,
    SessionDeleted,
    SessionDocument,
    SessionStatus,
    SessionUsage,
    as_session,
    as_session_agent,
    editable,
)
from wisp.serve.shapes.resources import resource_document, resource_params

SESSION_STATUSES: Final = ("rescheduling", "running", "idle", "terminated")


_MAX_INITIAL_EVENTS = 50
_AMOUNT = re.compile(r"\d+(\.\d+)?\Z")


# The agent fields a session snapshots (BetaManagedAgentsSessionAgent).
_SNAPSHOT_FIELDS: Final = ("id", "type", "version", "name", "description", "model", "system",
                           "tools", "mcp_servers", "skills", "execution_identity",
                           "multiagent")


def session_agent(agent: Mapping[str, Any], overrides: JSON | None = None) -> SessionAgent:
    """The snapshot of `agent` a session keeps, with a session's per-session overrides."""
    snapshot = {key: copy.deepcopy(agent.get(key)) for key in _SNAPSHOT_FIELDS}
    snapshot.update(copy.deepcopy(overrides or {}))
    check_mcp_refs(snapshot, "agent")
    return as_session_agent(snapshot)


def _version(value: object, path: str) -> int:
    return read_int(value, path, 1)


# What `agent_with_overrides` may replace, and how each reads.
_OVERRIDES: Final[Mapping[str, Callable[[Any, str], Any]]] = {
    "model": read_model, "system": read_optional_str, "tools": read_tools,
    "mcp_servers": read_mcp_servers, "skills": read_skills}


class AgentRef(TypedDict):
    """The agent a `POST /v1/sessions` names: `version` None is the latest; `overrides`
    (agent_with_overrides) replace fields of the snapshot."""

    id: str
    version: int | None
    overrides: JSON


class SessionFields(TypedDict):
    """What `session_create` returns."""

    agent: AgentRef
    environment_id: str
    title: str | None
    metadata: Metadata
    vault_ids: list[str]
    budget: JSON | None
    resources: list[JSON]
    initial_events: list[ClientEvent]


def _agent_ref(value: object, path: str) -> AgentRef:
    """The session's `agent` param: an id (latest version), `{"type": "agent", "id",
    "version"?}` or `{"type": "agent_with_overrides", ...}`, as {"id", "version" (None:
    latest), "overrides"}."""
    if isinstance(value, str):
        return {"id": read_str(value, path, empty=False), "version": None, "overrides": {}}
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), ("agent", "agent_with_overrides"))
    overrides: JSON = {}
    if kind == "agent_with_overrides":
        for key, read in _OVERRIDES.items():
            if key in obj and (obj[key] is not None or key == "system"):
                overrides[key] = read(obj[key], child_path(path, key))
    return {"id": read_str(required_field(obj, "id", path), child_path(path, "id"), empty=False),
            "version": optional_field(obj, "version", path, _version), "overrides": overrides}


def read_budget(value: object, path: str) -> JSON:
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("limit",))
    where = child_path(path, "max_list_cost")
    cost = read_object(required_field(obj, "max_list_cost", path), where)
    amount = read_str(required_field(cost, "amount", where), child_path(where, "amount"))
    if not _AMOUNT.match(amount):
        raise ShapeError(child_path(where, "amount"), "expected a decimal amount such as \"12.50\"")
    read_choice(cost.get("currency"), child_path(where, "currency"), ("USD",))
    return {"type": "limit", "max_list_cost": {"amount": amount, "currency": "USD"}}


def _initial_events(value: object, path: str) -> list[ClientEvent]:
    events = client_events(value, path, kinds=("user.message", "user.define_outcome"))
    if len(events) > _MAX_INITIAL_EVENTS:
        raise ShapeError(path, f"more than {_MAX_INITIAL_EVENTS} events")
    return events


def session_create(body: object) -> SessionFields:
    """The body of `POST /v1/sessions`, normalised. `agent` is a reference the caller
    resolves (then `session_agent`); `initial_events` are client events to append."""
    obj = read_object(body, "")
    return {
        "agent": _agent_ref(required_field(obj, "agent", ""), "agent"),
        "environment_id": read_str(required_field(obj, "environment_id", ""), "environment_id",
                                   empty=False),
        "title": optional_field(obj, "title", "", read_str),
        "metadata": optional_field(obj, "metadata", "", read_metadata, {}),
        "vault_ids": optional_field(obj, "vault_ids", "", read_strs, []),
        "budget": optional_field(obj, "budget", "", read_budget),
        "resources": optional_field(obj, "resources", "", resource_params, []),
        "initial_events": optional_field(obj, "initial_events", "", _initial_events, []),
    }


class SessionAgentPatch(TypedDict, total=False):
    """A session update's `agent`: the snapshot's tools and MCP servers it replaces."""

    tools: list[JSON]
    mcp_servers: list[JSON]


class SessionPatch(TypedDict, total=False):
    """What `session_update` returns: the fields the body sets, normalised (no
    `vault_ids`: they cannot change)."""

    agent: SessionAgentPatch
    budget: JSON | None  # None: the budget is removed
    metadata: dict[str, str | None]  # a None value deletes its key
    title: str | None


def _session_agent_patch(value: object, path: str) -> SessionAgentPatch:
    obj = read_object(value, path)
    patch: SessionAgentPatch = {}
    if obj.get("tools") is not None:
        patch["tools"] = read_tools(obj["tools"], child_path(path, "tools"))
    if obj.get("mcp_servers") is not None:
        patch["mcp_servers"] = read_mcp_servers(obj["mcp_servers"],
                                                child_path(path, "mcp_servers"))
    return patch


def session_update(body: object) -> SessionPatch:
    """The body of `POST /v1/sessions/{id}`: only the fields it sets. A null budget removes
    it; a null title clears it; `vault_ids` is refused, as the API refuses it."""
    obj = read_object(body, "")
    patch: SessionPatch = {}
    if obj.get("agent") is not None:
        patch["agent"] = _session_agent_patch(obj["agent"], "agent")
    if "budget" in obj:
        patch["budget"] = optional_field(obj, "budget", "", read_budget)
    if obj.get("metadata") is not None:
        patch["metadata"] = read_metadata(obj["metadata"], "metadata", patch=True)
    if "title" in obj:
        patch["title"] = read_optional_str(obj["title"], "title")
    if obj.get("vault_ids") is not None:
        raise ShapeError("vault_ids", "cannot be changed after the session is created")
    return patch


def _zero_usage() -> SessionUsage:
    return {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}


def session_document(fields: SessionFields, agent: SessionAgent, *,
                     session_id: str | None = None, deployment_id: str | None = None,
                     now: str | None = None) -> SessionDocument:
    """A new session (BetaManagedAgentsSession), idle, from `session_create`'s fields and
    the agent snapshot (`session_agent`); `deployment_id` when a deployment's run
    started it."""
    now = now or timestamp()
    return {
        "id": session_id or new_id("sesn"), "type": "session", "agent": copy.deepcopy(agent),
        "environment_id": fields["environment_id"], "title": fields.get("title"),
        "metadata": dict(fields.get("metadata") or {}),
        "vault_ids": list(fields.get("vault_ids") or []),
        "budget": copy.deepcopy(fields.get("budget")), "status": "idle",
        "resources": [resource_document(r, now=now) for r in fields.get("resources") or []],
        "outcome_evaluations": [],
        "stats": {"active_seconds": 0.0, "duration_seconds": 0.0}, "usage": _zero_usage(),
        "deployment_id": deployment_id, "created_at": now, "updated_at": now, "archived_at": None,
    }


def session_updated(doc: SessionDocument, patch: SessionPatch, *,
                    now: str | None = None) -> SessionDocument:
    """`doc` with `session_update`'s patch applied."""
    new = editable(doc)
    fields: Mapping[str, Any] = patch
    for key, value in fields.items():
        if key == "metadata":
            new[key] = patched_metadata(doc.get("metadata") or {}, value)
        elif key == "agent":
            new["agent"].update(copy.deepcopy(value))
            check_mcp_refs(new["agent"], "agent")
        else:
            new[key] = copy.deepcopy(value)
    new["updated_at"] = now or timestamp()
    return as_session(new)


def session_status(doc: SessionDocument, status: SessionStatus, *,
                   now: str | None = None) -> SessionDocument:
    """`doc` in another status (one of SESSION_STATUSES)."""
    read_choice(status, "status", SESSION_STATUSES)
    return {**doc, "status": status, "updated_at": now or timestamp()}


def session_usage_added(doc: SessionDocument, usage: Mapping[str, Any]) -> SessionDocument:
    """`doc` with one model request's usage (Messages API names) added to its totals."""
    total = editable(doc["usage"])
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens"):
        total[key] = (total.get(key) or 0) + int(usage.get(key) or 0)
    cache = total.setdefault("cache_creation", {})
    cache["ephemeral_5m_input_tokens"] = ((cache.get("ephemeral_5m_input_tokens") or 0)
                                          + int(usage.get("cache_creation_input_tokens") or 0))
    return as_session({**doc, "usage": total})


def deleted_session(session_id: str) -> SessionDeleted:
    """The body of `DELETE /v1/sessions/{id}`."""
    return {"id": session_id, "type": "session_deleted"}
