"""`client.beta.sessions.threads`: a session's threads (list, retrieve, archive) and each
thread's events (list, stream). A thread's events are its own log, kept under its id."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.follow import follow, session_gone
from wisp.serve.http import EventStream, HttpError, Request, Response, Router, SseWriter
from wisp.serve.session_log import Fanout, public
from wisp.serve.shapes import multiagent as thread_shapes
from wisp.serve.shapes.queries import check_known_params, query_limit, query_value, query_values
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.serve.threads import kind

Route = Callable[[Request], Awaitable[Response | EventStream]]
_BASE = "/v1/sessions/{session_id}/threads"
_THREAD = _BASE + "/{thread_id}"


def add_routes(router: Router, store: Store, fanout: Fanout,
               wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store, fanout)
    for method, path, handler in (
        ("GET", _BASE, routes.list),
        ("GET", _THREAD, routes.retrieve),
        ("POST", _THREAD + "/archive", routes.archive),
        ("GET", _THREAD + "/events", routes.events),
        ("GET", _THREAD + "/stream", routes.stream),
    ):
        router.add(method, path, wrap(handler))


class _Routes:
    def __init__(self, store: Store, fanout: Fanout) -> None:
        self.store = store
        self.fanout = fanout

    # Store calls are made off the event loop (`off_loop`): see `wisp.serve.app`.
    async def _get(self, kind_: str, owner: str, resource_id: str) -> JSON | None:
        return await off_loop(self.store, self.store.get, kind_, owner, resource_id)

    async def _thread(self, request: Request) -> JSON:
        session_id = request.params["session_id"]
        if await self._get("session", request.owner, session_id) is None:
            raise HttpError(404, "not_found_error", f"session {session_id} not found")
        thread_id = request.params["thread_id"]
        doc = await self._get(kind(session_id), request.owner, thread_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"thread {thread_id} not found")
        return doc

    async def list(self, request: Request) -> Response:
        session_id = request.params["session_id"]
        if await self._get("session", request.owner, session_id) is None:
            raise HttpError(404, "not_found_error", f"session {session_id} not found")
        check_known_params(request.query, ("limit", "page", "statuses"))
        statuses = thread_shapes.threads_query_statuses(query_values(request.query, "statuses"))
        page = await off_loop(self.store, self.store.list, kind(session_id), request.owner,
                              limit=query_limit(request.query, 20, 100),
                              page=query_value(request.query, "page"), order="asc",
                              include_archived=True)
        items = [t for t in page.items if not statuses or t["status"] in statuses]
        return Response(200, shapes.list_page(items, page.next_page))

    async def retrieve(self, request: Request) -> Response:
        return Response(200, await self._thread(request))

    async def archive(self, request: Request) -> Response:
        doc = await self._thread(request)
        if not doc.get("archived_at"):
            # Merged into the thread as stored (the worker writes its status meanwhile).
            stored = await off_loop(self.store, self.store.modify, kind(doc["session_id"]),
                                    request.owner, doc["id"], shapes.archived_once)
            if stored is None:  # deleted (with its session) since it was read
                raise HttpError(404, "not_found_error", f"thread {doc['id']} not found")
            doc = stored
        return Response(200, doc)

    async def events(self, request: Request) -> Response:
        thread = await self._thread(request)
        check_known_params(request.query, ("limit", "page"))
        page = await off_loop(self.store, self.store.events, thread["id"],
                              limit=query_limit(request.query, 1000, 1000),
                              page=query_value(request.query, "page"))
        return Response(200, shapes.list_page([public(e) for e in page.items],
                                              page.next_page))

    async def stream(self, request: Request) -> EventStream:
        thread = await self._thread(request)
        check_known_params(request.query, ())
        thread_id, session_id = thread["id"], thread["session_id"]
        after = await off_loop(self.store, self.store.last_seq, thread_id)
        wake = self.fanout.watch(thread_id)

        async def produce(out: SseWriter) -> None:
            await follow(self.store, thread_id, after, wake, asyncio.Queue(), out,
                         gone=session_gone(self.store, session_id))

        return EventStream(produce, on_close=lambda: self.fanout.unwatch(thread_id, wake))
