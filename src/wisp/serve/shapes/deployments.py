"""Deployments and deployment runs (`client.beta.deployments`, `.deployment_runs`): the
request bodies and queries, and the documents.

A deployment keeps what each of its sessions is created with (agent pinned to a version,
environment, initial events, resources, budget, vault ids) as a `POST /v1/sessions` body
(`session_body`), so a run creates its session exactly as a client would, with the same
checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypedDict, cast

from wisp.jsontypes import JSON
from wisp.serve.cron import Cron, CronError
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
from wisp.serve.shapes.companions import (
    DeploymentDocument,
    DeploymentRunDocument,
    as_deployment,
)
from wisp.serve.shapes.documents import Metadata, editable
from wisp.serve.shapes.queries import (
    check_known_params,
    created_bounds,
    query_flag,
    query_limit,
    query_value,
)
from wisp.serve.shapes.resources import resource_params
from wisp.serve.shapes.sessions import read_budget

STATUSES: Final = ("active", "paused")
TRIGGERS: Final = ("schedule", "manual")
# Where a session body's fields come from on a deployment (the rest are its own).
SESSION_FIELDS: Final = ("environment_id", "initial_events", "resources", "budget",
                         "vault_ids")


class AgentPin(TypedDict):
    """A deployment body's `agent`; version None: its latest, which the caller pins."""

    type: Literal["agent"]
    id: str
    version: int | None


def _agent(value: object, path: str) -> AgentPin:
    """An agent id (its latest version, resolved by the caller: version None) or
    `{"type": "agent", "id", "version"}`."""
    if isinstance(value, str):
        return {"type": "agent", "id": read_str(value, path, empty=False), "version": None}
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("agent",))
    return {"type": "agent",
            "id": read_str(required_field(obj, "id", path), child_path(path, "id"), empty=False),
            "version": read_int(required_field(obj, "version", path),
                                child_path(path, "version"), 1)}


def _schedule(value: object, path: str) -> JSON:
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("cron",))
    expression = read_str(required_field(obj, "expression", path), child_path(path, "expression"))
    zone = read_str(required_field(obj, "timezone", path), child_path(path, "timezone"))
    try:
        Cron.parse(expression, zone)
    except CronError as exc:
        raise ShapeError(child_path(path, "expression"), str(exc)) from None
    return {"type": "cron", "expression": expression, "timezone": zone,
            "last_run_at": None}


def _events(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ShapeError(path, "expected an array")
    return list(value)  # checked as a session's initial_events (`session_body`)


_READ: Final = {"name": lambda v, p: read_str(v, p, empty=False), "description": read_optional_str,
                "agent": _agent, "environment_id": lambda v, p: read_str(v, p, empty=False),
                "initial_events": _events, "resources": resource_params,
                "budget": read_budget, "schedule": _schedule, "vault_ids": read_strs}


class DeploymentFields(TypedDict):
    """What `deployment_create` returns: the deployment document's own fields."""

    name: str
    description: str | None
    agent: AgentPin
    environment_id: str
    initial_events: list[Any]  # checked as a session's (`session_body`)
    resources: list[JSON]
    budget: JSON | None
    schedule: JSON | None
    vault_ids: list[str]
    metadata: Metadata


class DeploymentPatch(TypedDict, total=False):
    """What `deployment_update` returns: the fields the body sets, normalised (a cleared
    one None, or empty for the lists)."""

    name: str
    description: str | None
    agent: AgentPin
    environment_id: str
    initial_events: list[Any]
    resources: list[JSON]
    budget: JSON | None
    schedule: JSON | None
    vault_ids: list[str]
    metadata: dict[str, str | None] | None  # None: cleared; a None value deletes its key


def deployment_create(body: object) -> DeploymentFields:
    obj = read_object(body, "")
    fields = {key: optional_field(obj, key, "", read) for key, read in _READ.items()}
    for key in ("name", "agent", "environment_id", "initial_events"):
        if fields[key] is None:
            raise ShapeError(key, "required")
    fields["metadata"] = optional_field(obj, "metadata", "", read_metadata, {})
    fields["resources"] = fields["resources"] or []
    fields["vault_ids"] = fields["vault_ids"] or []
    return cast(DeploymentFields, fields)  # `_READ`'s readers: tests/serve/test_body_types.py


def deployment_update(body: object) -> DeploymentPatch:
    """Only the fields the body sets; null clears `description`, `budget`, `schedule`,
    `resources`, `vault_ids` and `metadata`, and is refused for the others."""
    obj = read_object(body, "")
    patch: JSON = {}
    for key, read in _READ.items():
        if key not in obj:
            continue
        if obj[key] is None and key in ("name", "agent", "environment_id",
                                        "initial_events"):
            raise ShapeError(key, "cannot be null")
        empty: Any = [] if key in ("resources", "vault_ids") else None
        patch[key] = empty if obj[key] is None else read(obj[key], key)
    if "metadata" in obj:
        patch["metadata"] = (None if obj["metadata"] is None
                             else read_metadata(obj["metadata"], "metadata", patch=True))
    return cast(DeploymentPatch, patch)


def session_body(deployment: Mapping[str, Any]) -> JSON:
    """The `POST /v1/sessions` body a run of the deployment sends."""
    body: JSON = {key: deployment[key] for key in SESSION_FIELDS if deployment.get(key)}
    body["environment_id"] = deployment["environment_id"]
    body["agent"] = {"type": "agent", "id": deployment["agent"]["id"],
                     "version": deployment["agent"]["version"]}
    return body


def deployment_document(fields: DeploymentFields) -> DeploymentDocument:
    """A new deployment from `deployment_create`'s fields, its agent pinned by then."""
    now = timestamp()
    agent = fields["agent"]
    if agent["version"] is None:
        raise ValueError("a deployment's agent version is pinned before it is made")
    return with_schedule({
        "id": new_id("depl"), "type": "deployment", "name": fields["name"],
        "description": fields["description"],
        "agent": {"type": "agent", "id": agent["id"], "version": agent["version"]},
        "environment_id": fields["environment_id"],
        "initial_events": fields["initial_events"], "resources": fields["resources"],
        "budget": fields["budget"], "schedule": fields["schedule"],
        "vault_ids": fields["vault_ids"], "metadata": fields["metadata"],
        "status": "active", "paused_reason": None, "created_at": now, "updated_at": now,
        "archived_at": None})


def deployment_updated(doc: DeploymentDocument, patch: DeploymentPatch) -> DeploymentDocument:
    fields: Mapping[str, Any] = patch
    new = {**editable(doc), **{k: v for k, v in fields.items() if k != "metadata"},
           "updated_at": timestamp()}
    if "metadata" in patch:
        new["metadata"] = ({} if patch["metadata"] is None
                           else patched_metadata(doc["metadata"], patch["metadata"]))
    old = doc.get("schedule")
    if patch.get("schedule") is not None and old:
        new["schedule"]["last_run_at"] = old.get("last_run_at")
    return with_schedule(as_deployment(new))


def with_schedule(doc: DeploymentDocument, now: datetime | None = None) -> DeploymentDocument:
    """The schedule's `upcoming_runs_at` as of now (none once archived)."""
    schedule = doc.get("schedule")
    if not schedule:
        return doc
    upcoming: list[str] = []
    if not doc.get("archived_at"):
        cron = Cron.parse(schedule["expression"], schedule["timezone"])
        upcoming = [stamp(t) for t in cron.upcoming(now or datetime.now(UTC))]
    return {**doc, "schedule": {**schedule, "upcoming_runs_at": upcoming}}


def stamp(moment: datetime) -> str:
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def run_document(deployment: DeploymentDocument, trigger: JSON, *,
                 session_id: str | None = None,
                 error: JSON | None = None) -> DeploymentRunDocument:
    return {"id": new_id("drun"), "type": "deployment_run",
            "deployment_id": deployment["id"], "agent": deployment["agent"].copy(),
            "trigger_context": trigger, "session_id": session_id, "error": error,
            "created_at": timestamp()}


def deployments_query(query: Mapping[str, Sequence[str]]) -> JSON:
    check_known_params(query, ("limit", "page", "include_archived", "agent_id", "status",
                               "created_at[gte]", "created_at[lte]"))
    status = query_value(query, "status")
    out: JSON = {"limit": query_limit(query, 20, 100), "page": query_value(query, "page"),
                 "include_archived": query_flag(query, "include_archived"),
                 "agent_id": query_value(query, "agent_id"),
                 "status": None if status is None else read_choice(status, "status", STATUSES),
                 **created_bounds(query)}
    if out["status"] is not None and out["include_archived"]:
        raise ShapeError("status", "cannot be combined with include_archived")
    return out


def runs_query(query: Mapping[str, Sequence[str]]) -> JSON:
    check_known_params(query, ("limit", "page", "deployment_id", "has_error", "trigger_type",
                               "created_at[gt]", "created_at[gte]", "created_at[lt]",
                               "created_at[lte]"))
    has_error = query_value(query, "has_error")
    trigger = query_value(query, "trigger_type")
    return {"limit": query_limit(query, 20, 100), "page": query_value(query, "page"),
            "deployment_id": query_value(query, "deployment_id"),
            "has_error": None if has_error is None else query_flag(query, "has_error"),
            "trigger_type": None if trigger is None else read_choice(trigger, "trigger_type",
                                                                     TRIGGERS),
            **created_bounds(query)}
