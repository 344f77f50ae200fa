"""What the API checks of a request around its handlers (`wisp.serve.app`): its form
before a handler runs and a shape error after (`shape_errors`), a session list's filters
(`session_matches`) and a stream's `Last-Event-ID` (`last_event_id`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.http import EventStream, HttpError, Request, Response

Route = Callable[[Request], Awaitable[Response | EventStream]]


def shape_errors(handler: Route) -> Route:
    """A ShapeError (a wrong type, a missing field) is a 400 naming the field."""
    async def checked(request: Request) -> Response | EventStream:
        if request.headers.get("anthropic-workspace-id"):
            # The SDK's `workspace_id`: wisp has no workspaces, and would otherwise answer
            # from the key's resources as if the workspace had been selected.
            raise HttpError(400, "invalid_request_error",
                            "workspace_id (anthropic-workspace-id): workspaces are not "
                            "supported by this server")
        if request.body and not is_json(request.headers.get("content-type", "")):
            raise HttpError(400, "invalid_request_error",
                            "content-type: expected application/json")
        try:
            return await handler(request)
        except shapes.ShapeError as exc:
            raise HttpError(400, "invalid_request_error", str(exc)) from None
        except ValueError as exc:  # a bad cursor or time in a query
            raise HttpError(400, "invalid_request_error", str(exc)) from None
    return checked


def is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


def session_matches(session: JSON, query: JSON) -> bool:
    agent = session.get("agent") or {}
    stores = {str(r.get("memory_store_id")) for r in session.get("resources") or []
              if r.get("type") == "memory_store"}
    return ((not query["statuses"] or session.get("status") in query["statuses"])
            and query["agent_id"] in (None, agent.get("id"))
            and query["agent_version"] in (None, agent.get("version"))
            and query["deployment_id"] in (None, session.get("deployment_id"))
            and (query["memory_store_id"] is None or query["memory_store_id"] in stores)
            and shapes.created_within(session, query))


def last_event_id(request: Request) -> int:
    """`Last-Event-ID` (the seq of the last event a client saw): resume after it."""
    raw = request.headers.get("last-event-id", "")
    if not raw.isdigit():
        raise HttpError(400, "invalid_request_error", "Last-Event-ID must be an event seq")
    return int(raw)
