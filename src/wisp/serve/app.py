"""The API the official SDK calls: agents, environments, sessions and session events,
routed onto the store (what is kept), the worker (what runs) and the fanout (who follows).

Request bodies and response documents are `wisp.serve.shapes`' business; this module
only wires them. Every resource belongs to the key that created it (`request.owner`);
another key gets 404 for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from wisp.jsontypes import JSON
from wisp.serve import (
    deployment_routes,
    file_sources,
    files,
    memory_routes,
    resources,
    shapes,
    skill_routes,
    thread_routes,
    threads,
    vault_routes,
    webhook_routes,
    webhooks,
    work_routes,
)
from wisp.serve.api_checks import last_event_id, session_matches, shape_errors
from wisp.serve.follow import follow, preview_filter, session_gone
from wisp.serve.http import EventStream, HttpError, Request, Response, Router, SseWriter
from wisp.serve.session_log import Fanout, public
from wisp.serve.session_writes import SessionWrites
from wisp.serve.skills import Skills
from wisp.serve.store.base import Change, Store
from wisp.serve.store.offload import off_loop
from wisp.serve.work import WorkQueue


class Dispatch(Protocol):
    """Where client events go once logged: the embedded `Worker`, or the durable turns
    of a PostgreSQL deployment (`wisp.serve.durable.dispatch`)."""

    def notify(self, session_id: str) -> None:
        """The session has new queued client events."""

    def forget(self, session_id: str) -> None:
        """The session was deleted: stop its turns."""


class Api:
    """Made on the event loop it serves (`start_session` wakes sessions on it)."""

    def __init__(self, store: Store, fanout: Fanout, worker: Dispatch | None, *,
                 files_dir: Path | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        self.store = store
        self.fanout = fanout
        self.worker = worker
        self.work = WorkQueue(store)
        # Uploaded files' bytes; None: a service without a data folder (the HTTP tests).
        self.files = None if files_dir is None else files.Files(store, files_dir)
        self.writes = SessionWrites(store, self.work, self.files)
        self.router = Router()
        self._routes()

    def _routes(self) -> None:
        add = self.router.add
        for method, path, handler in (
            ("POST", "/v1/agents", self.create_agent),
            ("GET", "/v1/agents", self.list_agents),
            ("GET", "/v1/agents/{agent_id}", self.get_agent),
            ("GET", "/v1/agents/{agent_id}/versions", self.list_agent_versions),
            ("POST", "/v1/agents/{agent_id}", self.update_agent),
            ("POST", "/v1/agents/{agent_id}/archive", self.archive_agent),
            ("POST", "/v1/environments", self.create_environment),
            ("GET", "/v1/environments", self.list_environments),
            ("GET", "/v1/environments/{environment_id}", self.get_environment),
            ("POST", "/v1/environments/{environment_id}", self.update_environment),
            ("POST", "/v1/environments/{environment_id}/archive", self.archive_environment),
            ("DELETE", "/v1/environments/{environment_id}", self.delete_environment),
            ("POST", "/v1/sessions", self.create_session),
            ("GET", "/v1/sessions", self.list_sessions),
            ("GET", "/v1/sessions/{session_id}", self.get_session),
            ("POST", "/v1/sessions/{session_id}", self.update_session),
            ("POST", "/v1/sessions/{session_id}/archive", self.archive_session),
            ("DELETE", "/v1/sessions/{session_id}", self.delete_session),
            ("GET", "/v1/sessions/{session_id}/events", self.list_events),
            ("POST", "/v1/sessions/{session_id}/events", self.send_events),
            ("GET", "/v1/sessions/{session_id}/events/stream", self.stream_events),
        ):
            add(method, path, shape_errors(handler))
        for routes in (webhook_routes, resources, memory_routes, vault_routes, skill_routes):
            routes.add_routes(self.router, self.store, shape_errors)
        thread_routes.add_routes(self.router, self.store, self.fanout, shape_errors)
        work_routes.add_routes(self.router, self.store, self.work, shape_errors)
        deployment_routes.add_routes(self.router, self.store, self.start_session, shape_errors)
        if self.files is not None:
            files.add_routes(self.router, self.files, shape_errors)

    # Common ---------------------------------------------------------------------------
    # Handlers make their store calls off the event loop (`off_loop`): on PostgreSQL each
    # is a round trip, which on the loop would stall every other request and stream.

    async def _found(self, kind: str, request: Request, key: str) -> JSON:
        doc = await off_loop(self.store, self.store.get, kind, request.owner,
                             request.params[key])
        if doc is None:
            raise HttpError(404, "not_found_error", f"{kind} {request.params[key]} not found")
        return doc

    async def _listing(self, kind: str, request: Request, query: JSON | None = None
                       ) -> Response:
        query = query or shapes.resources_query(request.query)
        page = await off_loop(self.store, self.store.list, kind, request.owner,
                              limit=query["limit"], page=query["page"],
                              include_archived=query["include_archived"])
        items = [doc for doc in page.items if shapes.created_within(doc, query)]
        return Response(200, shapes.list_page(items, page.next_page))

    async def _modify(self, kind: str, request: Request, key: str, change: Change) -> JSON:
        """`Store.modify` (one locked read-modify-write: a concurrent write to the
        document is never lost); 404 when there is no such resource."""
        doc = await off_loop(self.store, self.store.modify, kind, request.owner,
                             request.params[key], change)
        if doc is None:
            raise HttpError(404, "not_found_error", f"{kind} {request.params[key]} not found")
        return doc

    async def _archive(self, kind: str, request: Request, key: str) -> Response:
        return Response(200, await self._modify(kind, request, key, shapes.archived))

    # Agents ---------------------------------------------------------------------------

    async def create_agent(self, request: Request) -> Response:
        fields = shapes.agent_create(request.json())
        shapes.check_agent_fields(fields)
        await off_loop(self.store, self._resolve, request.owner, fields)
        doc = shapes.agent_document(fields)
        await off_loop(self.store, self._save_agent, request.owner, doc, new=True)
        return Response(200, doc)

    def _resolve(self, owner: str, fields: Mapping[str, Any]) -> None:
        """An agent's roster and skills, as the store names them (off the loop)."""
        threads.resolve_roster(self.store, owner, fields)
        Skills(self.store, owner).resolve(fields)

    def _save_agent(self, owner: str, doc: shapes.AgentDocument, *, new: bool) -> None:
        """The agent (when `new`) and its version: sessions may name an older version, so
        each one is kept (off the loop)."""
        if new:
            self.store.create("agent", owner, doc)
        self.store.create("agent_version", owner,
                          {**doc, "id": f"{doc['id']}@{doc['version']}"})

    async def list_agents(self, request: Request) -> Response:
        return await self._listing("agent", request, shapes.agents_query(request.query))

    async def get_agent(self, request: Request) -> Response:
        doc = await self._found("agent", request, "agent_id")
        versions = request.query.get("version") or []
        version = versions[0] if versions else None
        if version is not None and str(version) != str(doc["version"]):
            old = await off_loop(self.store, self.store.get, "agent_version", request.owner,
                                 f"{doc['id']}@{version}")
            if old is None:
                raise HttpError(404, "not_found_error", f"agent version {version} not found")
            return Response(200, {**old, "id": doc["id"]})
        return Response(200, doc)

    async def list_agent_versions(self, request: Request) -> Response:
        """Every version, newest first; the cursor is the version a page stopped above."""
        doc = await self._found("agent", request, "agent_id")
        query = shapes.resources_query(request.query, allowed=("limit", "page"))
        top = int(doc["version"])
        if query["page"] is not None:
            if not query["page"].startswith("v") or not query["page"][1:].isdigit():
                raise HttpError(400, "invalid_request_error", "page: invalid page cursor")
            top = min(top, int(query["page"][1:]) - 1)
        numbers = list(range(top, max(top - query["limit"], 0), -1))
        versions = await off_loop(self.store, self._versions, request.owner, doc["id"],
                                  numbers)
        items = [{**v, "id": doc["id"]} for v in versions if v is not None]
        more = bool(numbers) and numbers[-1] > 1
        return Response(200, shapes.list_page(items, f"v{numbers[-1]}" if more else None))

    def _versions(self, owner: str, agent_id: str, numbers: list[int]) -> list[JSON | None]:
        return [self.store.get("agent_version", owner, f"{agent_id}@{n}") for n in numbers]

    async def update_agent(self, request: Request) -> Response:
        patch = shapes.agent_update(request.json())
        await off_loop(self.store, self._resolve, request.owner, patch)
        expected = patch.pop("version", None)
        changed: list[shapes.AgentDocument] = []  # the new version, when there is one

        def change(stored: JSON) -> shapes.AgentDocument | None:
            # The version check runs under the row lock: two updates that both expect
            # version N cannot both succeed.
            doc = shapes.as_agent(stored)
            if expected is not None and expected != doc["version"]:
                raise HttpError(409, "invalid_request_error",
                                f"agent is at version {doc['version']}, not {expected}",
                                headers={"x-should-retry": "false"})
            new = shapes.agent_updated(doc, patch)
            shapes.check_agent_fields(new)
            if new == doc:
                return None  # nothing changed: no write, no new version
            changed.append(new)
            return new

        stored = await self._modify("agent", request, "agent_id", change)
        if changed:
            await off_loop(self.store, self._save_agent, request.owner, changed[0], new=False)
        return Response(200, stored)

    async def archive_agent(self, request: Request) -> Response:
        return await self._archive("agent", request, "agent_id")

    # Environments ---------------------------------------------------------------------

    async def create_environment(self, request: Request) -> Response:
        doc = shapes.environment_document(shapes.environment_create(request.json()))
        await off_loop(self.store, self.store.create, "environment", request.owner, doc)
        return Response(200, doc)

    async def list_environments(self, request: Request) -> Response:
        return await self._listing("environment", request)

    async def get_environment(self, request: Request) -> Response:
        return Response(200, await self._found("environment", request, "environment_id"))

    async def update_environment(self, request: Request) -> Response:
        patch = shapes.environment_update(request.json())

        def change(stored: JSON) -> shapes.EnvironmentDocument:
            doc = shapes.as_environment(stored)
            if "config" in patch and patch["config"]["type"] != doc["config"]["type"]:
                # Its sessions' tools run where the type says: switching would strand them.
                raise HttpError(400, "invalid_request_error", "config.type: an environment's "
                                f"type cannot change (it is {doc['config']['type']})")
            return shapes.environment_updated(doc, patch)

        return Response(200, await self._modify("environment", request, "environment_id",
                                                change))

    async def archive_environment(self, request: Request) -> Response:
        return await self._archive("environment", request, "environment_id")

    async def delete_environment(self, request: Request) -> Response:
        doc = await self._found("environment", request, "environment_id")
        await off_loop(self.store, self.store.delete, "environment", request.owner, doc["id"])
        return Response(200, shapes.deleted_environment(doc["id"]))

    # Sessions -------------------------------------------------------------------------

    async def create_session(self, request: Request) -> Response:
        doc, queued = await off_loop(self.store, self.writes.new_session, request.owner,
                                     request.json())
        if queued:
            self._woken(doc["id"])
        return Response(200, doc)

    def start_session(self, owner: str, body: Any,
                      deployment_id: str | None = None) -> shapes.SessionDocument:
        """A session from a `POST /v1/sessions` body (a deployment run's). Store work,
        called off the loop (`off_loop`): the session is woken on the loop."""
        doc, queued = self.writes.new_session(owner, body, deployment_id)
        if queued:
            self.loop.call_soon_threadsafe(self._woken, doc["id"])
        return doc

    async def list_sessions(self, request: Request) -> Response:
        query = shapes.sessions_query(request.query)
        page = await off_loop(self.store, self.store.list, "session", request.owner,
                              limit=query["limit"], page=query["page"], order=query["order"],
                              include_archived=query["include_archived"])
        items = [s for s in page.items if session_matches(s, query)]
        return Response(200, shapes.session_list_page(items, page.next_page))

    async def get_session(self, request: Request) -> Response:
        return Response(200, await self._found("session", request, "session_id"))

    async def update_session(self, request: Request) -> Response:
        patch = shapes.session_update(request.json())
        seen: list[shapes.SessionDocument] = []  # the document the patch was applied to

        def change(stored: JSON) -> shapes.SessionDocument:
            seen.append(shapes.as_session(stored))
            new = shapes.session_updated(seen[-1], patch)
            shapes.check_agent_fields(new["agent"], "agent")
            return new

        new = shapes.as_session(await self._modify("session", request, "session_id", change))
        doc = seen[-1]
        fields: Mapping[str, Any] = new  # read by the patch's keys
        changes = {key: fields[key] for key in patch if fields.get(key) != doc.get(key)}
        if changes:
            await self._log_session_event(request.owner, doc["id"],
                                          shapes.session_updated_event(_announced(changes)))
        return Response(200, new)

    async def _log_session_event(self, owner: str, session_id: str,
                                 typed: shapes.ServerEvent) -> None:
        """A service event about the session (not of a turn), with its webhooks: written
        off the loop, followers and the deliverer woken on it."""
        event = shapes.log_entry(typed)
        await off_loop(self.store, self._append_reported, owner, session_id, event)
        self.fanout.wake(session_id)
        webhooks.hub(self.store).wake()

    def _append_reported(self, owner: str, session_id: str, event: JSON) -> None:
        hub = webhooks.hub(self.store)  # its deliveries are written with it
        self.store.append(session_id, [event],
                          deliveries=hub.deliveries(owner, session_id, [event]))

    async def archive_session(self, request: Request) -> Response:
        answer = await self._archive("session", request, "session_id")
        await off_loop(self.store, self._stop_work, request.owner, answer.body)
        return answer

    def _stop_work(self, owner: str, session: Any) -> None:
        """A session archived or deleted: its environment's worker lets it go."""
        if isinstance(session, dict):
            self.work.request_stop(owner, str(session["environment_id"]), str(session["id"]))

    async def delete_session(self, request: Request) -> Response:
        doc = await self._found("session", request, "session_id")
        await self._log_session_event(request.owner, doc["id"], shapes.session_deleted_event())
        if self.worker is not None:
            self.worker.forget(doc["id"])
        await off_loop(self.store, self._remove_session, request.owner, doc)
        return Response(200, shapes.deleted_session(doc["id"]))

    def _remove_session(self, owner: str, doc: JSON) -> None:
        self._stop_work(owner, doc)
        self.store.delete("session", owner, doc["id"])

    # Events -----------------------------------------------------------------------------

    async def list_events(self, request: Request) -> Response:
        session = await self._found("session", request, "session_id")
        query = shapes.events_query(request.query)
        page = await off_loop(self.store, self.store.events, session["id"], **query)
        return Response(200, shapes.list_page([public(e) for e in page.items],
                                              page.next_page))

    async def send_events(self, request: Request) -> Response:
        session = await self._found("session", request, "session_id")
        if session.get("status") == "terminated":
            raise HttpError(400, "invalid_request_error", "the session has terminated")
        if session.get("archived_at"):
            raise HttpError(400, "invalid_request_error", "the session is archived")
        events = shapes.send_events(request.json())
        shapes.check_client_events(events)
        await off_loop(self.store, file_sources.check, self.files, request.owner, events)
        stored = await off_loop(self.store, self.writes.accept, request.owner, session, events)
        self._woken(session["id"])
        return Response(200, shapes.send_events_response([public(e) for e in stored]))

    def _woken(self, session_id: str) -> None:
        """The session's followers and its worker, once client events are logged."""
        self.fanout.wake(session_id)
        if self.worker is not None:
            self.worker.notify(session_id)

    async def stream_events(self, request: Request) -> EventStream:
        session = await self._found("session", request, "session_id")
        session_id = session["id"]
        previews = shapes.stream_query(request.query)
        after = last_event_id(request) if request.headers.get("last-event-id") else (
            await off_loop(self.store, self.store.last_seq, session_id))
        wake = self.fanout.watch(session_id)  # before returning: nothing may be missed
        outbox: asyncio.Queue[JSON] = asyncio.Queue()
        stop_previews = (self.fanout.on_preview(
            session_id, preview_filter(previews, outbox, wake)) if previews else None)

        async def produce(out: SseWriter) -> None:
            await follow(self.store, session_id, after, wake, outbox, out,
                         gone=session_gone(self.store, session_id))

        def closed() -> None:
            self.fanout.unwatch(session_id, wake)
            if stop_previews is not None:
                stop_previews()

        return EventStream(produce, on_close=closed)


def _announced(changes: JSON) -> JSON:
    """What `session.updated` carries: metadata only when non-empty (the event's
    documented form; cleared metadata is absent)."""
    return {k: v for k, v in changes.items() if not (k == "metadata" and not v)}
