"""List envelopes and the query strings of the list and stream endpoints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

from wisp.jsontypes import JSON
from wisp.serve.shapes.client_events import CLIENT_EVENT_TYPES
from wisp.serve.shapes.common import ShapeError, instant, read_choice
from wisp.serve.shapes.documents import Page, SessionPage
from wisp.serve.shapes.sessions import SESSION_STATUSES

T = TypeVar("T")

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


def list_page(data: Sequence[T], next_page: str | None = None) -> Page[T]:
    """The list envelope (SyncPageCursor): the SDK asks for the next page with
    `?page=<next_page>` (and the first query's other parameters) until it is null."""
    return {"data": list(data), "next_page": next_page}


def session_list_page(data: Sequence[T], next_page: str | None = None,
                      prev_page: str | None = None) -> SessionPage[T]:
    """The sessions list envelope (SyncBidirectionalPageCursor): also `prev_page`."""
    return {"data": list(data), "next_page": next_page, "prev_page": prev_page}


Query = Mapping[str, Sequence[str]]


def query_value(query: Query, key: str) -> str | None:
    values = query.get(key) or ()
    return values[-1] if values else None


def query_values(query: Query, key: str) -> list[str]:
    # The SDK sends arrays as `key[]=a&key[]=b`; plain repeats are accepted too.
    return [*(query.get(key + "[]") or ()), *(query.get(key) or ())]


def query_limit(query: Query, default: int, ceiling: int) -> int:
    raw = query_value(query, "limit")
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ShapeError("limit", "expected a positive integer")
    return min(int(raw), ceiling)  # more than a page holds: the cursor brings the rest


def query_flag(query: Query, key: str) -> bool:
    raw = (query_value(query, key) or "false").lower()
    return read_choice(raw, key, ("true", "false")) == "true"


def created_bounds(query: Query) -> JSON:
    bounds: JSON = {}
    for op in ("gt", "gte", "lt", "lte"):
        raw = query_value(query, f"created_at[{op}]")
        if raw is not None:
            bounds[f"created_{op}"] = instant(raw, f"created_at[{op}]",
                                              round_up=op in ("gte", "lt"))
    return bounds


# Sent by the SDK on every beta call (`?beta=true`): not a filter.
_ALWAYS: Final = frozenset({"beta"})
_CREATED: Final = ("created_at[gt]", "created_at[gte]", "created_at[lt]", "created_at[lte]")


def check_known_params(query: Query, allowed: Sequence[str]) -> None:
    """A parameter this endpoint does not read is refused, not ignored: a filter that
    silently does nothing returns wrong results."""
    expected = _ALWAYS | set(allowed) | {f"{key}[]" for key in allowed}
    for key in query:
        if key not in expected:
            raise ShapeError(key, "this list does not support this parameter")


def resources_query(query: Query, *, default_limit: int = 20, max_limit: int = 100,
                    allowed: Sequence[str] = ("limit", "page", "include_archived")) -> JSON:
    """`limit`, `page`, `include_archived` (and the created_at bounds, where `allowed`)
    of an agents or environments list, newest first."""
    check_known_params(query, allowed)
    return {"limit": query_limit(query, default_limit, max_limit),
            "page": query_value(query, "page"),
            "include_archived": query_flag(query, "include_archived"), "order": "desc",
            **created_bounds(query)}


def agents_query(query: Query) -> JSON:
    """The agents list's query: also `created_at[gte]` and `created_at[lte]`."""
    return resources_query(query, allowed=("limit", "page", "include_archived",
                                           "created_at[gte]", "created_at[lte]"))


def created_within(doc: Mapping[str, Any], bounds: JSON) -> bool:
    """Whether a document's `created_at` is within a query's `created_*` bounds (both
    in the stored form, so strings compare as times)."""
    created = str(doc.get("created_at") or "")
    return (("created_gt" not in bounds or created > bounds["created_gt"])
            and ("created_gte" not in bounds or created >= bounds["created_gte"])
            and ("created_lt" not in bounds or created < bounds["created_lt"])
            and ("created_lte" not in bounds or created <= bounds["created_lte"]))


def sessions_query(query: Query) -> JSON:
    """The sessions list's query: also `order` (default desc), `statuses[]`, `agent_id`,
    `agent_version`."""
    out = resources_query(query, allowed=(
        "limit", "page", "include_archived", "order", "statuses", "agent_id",
        "agent_version", "memory_store_id", "deployment_id", *_CREATED))
    out["memory_store_id"] = query_value(query, "memory_store_id")
    out["deployment_id"] = query_value(query, "deployment_id")
    out["order"] = read_choice(query_value(query, "order") or "desc", "order", ("asc", "desc"))
    out["statuses"] = [read_choice(s, "statuses",
                                   SESSION_STATUSES) for s in query_values(query, "statuses")]
    out["agent_id"] = query_value(query, "agent_id")
    version = query_value(query, "agent_version")
    if version is not None and not (version.isdigit() and int(version) >= 1):
        raise ShapeError("agent_version", "expected a positive integer")
    out["agent_version"] = None if version is None else int(version)
    return out


def files_query(query: Query) -> JSON:
    """The files list's query: `limit` (default 20, at most 1000), `page`, `scope_id`, or
    `ids[]` (at most 100; then neither `limit` nor `page`)."""
    check_known_params(query, ("limit", "page", "scope_id", "ids"))
    ids = list(dict.fromkeys(query_values(query, "ids"))) or None
    if ids is not None and (query_value(query, "limit") or query_value(query, "page")):
        raise ShapeError("ids", "cannot be combined with limit or page")
    if ids is not None and len(ids) > 100:
        raise ShapeError("ids", "at most 100 ids")
    return {"limit": query_limit(query, 20, 1000), "page": query_value(query, "page"),
            "scope_id": query_value(query, "scope_id"), "ids": ids}


def events_query(query: Query) -> JSON:
    """The events list's query: `limit` (default and ceiling 1000: the SDK's tool runner
    asks for 1000), `page`, `order` (default asc), `types[]`, `created_at[...]`."""
    check_known_params(query, ("limit", "page", "order", "types", *_CREATED))
    return {"limit": query_limit(query, 1000, 1000), "page": query_value(query, "page"),
            "order": read_choice(query_value(query, "order") or "asc", "order", ("asc", "desc")),
            "types": [read_choice(t, "types", EVENT_TYPES)
                      for t in query_values(query, "types")] or None,
            **created_bounds(query)}


def stream_query(query: Query) -> list[str]:
    """The `event_deltas[]` of a stream request: the event types to preview."""
    check_known_params(query, ("event_deltas",))
    return [read_choice(t, "event_deltas", ("agent.message", "agent.thinking"))
            for t in query_values(query, "event_deltas")]
