"""Sessions: the `POST /v1/sessions` and `POST /v1/sessions/{id}` bodies, the agent
snapshot a session keeps, and the session documents (status, usage)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.agent_tools import _check_mcp_refs, _mcp_servers, _tools
from wisp.serve.shapes.agents import _model, _skills
from wisp.serve.shapes.client_events import ClientEvent, client_events
from wisp.serve.shapes.common import (
    ShapeError,
    _at,
    _choice,
    _get,
    _int,
    _metadata,
    _obj,
    _opt_str,
    _patch_metadata,
    _required,
    _str,
    _strs,
    new_id,
    timestamp,
)
from wisp.serve.shapes.resources import resource_document, resource_params

SESSION_STATUSES: Final = ("rescheduling", "running", "idle", "terminated")


_MAX_INITIAL_EVENTS = 50
_AMOUNT = re.compile(r"\d+(\.\d+)?\Z")


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


def _initial_events(value: object, path: str) -> list[ClientEvent]:
    events = client_events(value, path, kinds=("user.message", "user.define_outcome"))
    if len(events) > _MAX_INITIAL_EVENTS:
        raise ShapeError(path, f"more than {_MAX_INITIAL_EVENTS} events")
    return events


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
        "resources": _get(obj, "resources", "", resource_params, []),
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
        "resources": [resource_document(r, now=now) for r in fields.get("resources") or []],
        "outcome_evaluations": [],
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
