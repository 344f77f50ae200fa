"""`/v1/environments/{environment_id}/work…`: the routes of the self-hosted work queue
(`wisp.serve.work`). A worker authenticates with an environment key, which for wisp is
an API key of the environment's owner (sent as `Authorization: Bearer`, as the SDK's
`EnvironmentWorker` does)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.http import EventStream, HttpError, Request, Response, Router
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop
from wisp.serve.work import WorkQueue, public

Route = Callable[[Request], Awaitable[Response | EventStream]]
_ENV = "/v1/environments/{environment_id}/work"


def add_routes(router: Router, store: Store, queue: WorkQueue,
               wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store, queue)
    for method, path, handler in (
        ("GET", _ENV, routes.list),
        ("GET", f"{_ENV}/poll", routes.poll),
        ("GET", f"{_ENV}/stats", routes.stats),
        ("GET", f"{_ENV}/{{work_id}}", routes.retrieve),
        ("POST", f"{_ENV}/{{work_id}}", routes.update),
        ("POST", f"{_ENV}/{{work_id}}/ack", routes.ack),
        ("POST", f"{_ENV}/{{work_id}}/heartbeat", routes.heartbeat),
        ("POST", f"{_ENV}/{{work_id}}/stop", routes.stop),
    ):
        router.add(method, path, wrap(handler))


def _int_param(request: Request, key: str, lo: int, hi: int) -> int | None:
    values = request.query.get(key) or []
    if not values or values[-1] in ("", "null"):
        return None
    raw = values[-1]
    if not raw.isdigit() or not lo <= int(raw) <= hi:
        raise shapes.ShapeError(key, f"expected an integer from {lo} to {hi}")
    return int(raw)


def _only(request: Request, *keys: str) -> None:
    for key in request.query:
        if key not in (*keys, "beta"):
            raise shapes.ShapeError(key, "this endpoint does not support this parameter")


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`."""

    def __init__(self, store: Store, queue: WorkQueue) -> None:
        self.store = store
        self.queue = queue

    def _known(self, owner: str, environment_id: str) -> str:
        if self.store.get("environment", owner, environment_id) is None:
            raise HttpError(404, "not_found_error", f"environment {environment_id} not found")
        return environment_id

    async def _environment(self, request: Request) -> str:
        return await off_loop(self.store, self._known, request.owner,
                              request.params["environment_id"])

    def _found(self, owner: str, environment_id: str, work_id: str) -> JSON:
        return self.queue.get(owner, self._known(owner, environment_id), work_id)

    async def _item(self, request: Request) -> JSON:
        return await off_loop(self.store, self._found, request.owner,
                              request.params["environment_id"], request.params["work_id"])

    async def list(self, request: Request) -> Response:
        query = shapes.resources_query(request.query, allowed=("limit", "page"))
        environment_id = await self._environment(request)
        page = await off_loop(self.store, self.store.list, f"work:{environment_id}",
                              request.owner, limit=query["limit"], page=query["page"],
                              include_archived=True)
        return Response(200, shapes.list_page([public(d) for d in page.items],
                                              page.next_page))

    async def poll(self, request: Request) -> Response:
        _only(request, "block_ms", "reclaim_older_than_ms")
        environment_id = await self._environment(request)
        item = await self.queue.poll(
            request.owner, environment_id,
            block_ms=_int_param(request, "block_ms", 1, 999),
            reclaim_ms=_int_param(request, "reclaim_older_than_ms", 1, 86_400_000),
            worker_id=request.headers.get("anthropic-worker-id"))
        if item is None:  # the SDK reads a JSON null as "no work"
            return Response(200, b"null", {"content-type": "application/json"})
        return Response(200, public(item))

    async def stats(self, request: Request) -> Response:
        _only(request)
        environment_id = await self._environment(request)
        return Response(200, await off_loop(self.store, self.queue.stats, request.owner,
                                            environment_id))

    async def retrieve(self, request: Request) -> Response:
        return Response(200, public(await self._item(request)))

    async def update(self, request: Request) -> Response:
        doc = await self._item(request)
        body = request.json()
        if not isinstance(body, dict) or body.get("metadata") is None:
            raise shapes.ShapeError("metadata", "required")
        patch = shapes.environment_update({"metadata": body["metadata"]})["metadata"]
        return Response(200, public(await off_loop(self.store, self.queue.update_metadata,
                                                   request.owner, doc, patch)))

    async def ack(self, request: Request) -> Response:
        doc = await self._item(request)
        return Response(200, public(await off_loop(self.store, self.queue.ack,
                                                   request.owner, doc)))

    async def heartbeat(self, request: Request) -> Response:
        _only(request, "desired_ttl_seconds", "expected_last_heartbeat")
        sent = request.query.get("expected_last_heartbeat") or []
        expected = sent[-1] if sent else None
        doc = await self._item(request)
        ttl = _int_param(request, "desired_ttl_seconds", 1, 3600)
        answer = await off_loop(self.store, self.queue.heartbeat, request.owner, doc,
                                expected, ttl)
        return Response(200, answer)

    async def stop(self, request: Request) -> Response:
        body = request.json() if request.body else {}
        force = body.get("force") if isinstance(body, dict) else None
        if force is not None and not isinstance(force, bool):
            raise shapes.ShapeError("force", "expected a boolean")
        doc = await off_loop(self.store, self.queue.stop, request.owner,
                             await self._item(request), force=bool(force))
        return Response(200, public(doc))
