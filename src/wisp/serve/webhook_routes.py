"""The webhook endpoint-management routes (`wisp.serve.webhooks` says what they are):
create, list, get and delete `/v1/webhook_endpoints`, each store call made off the event
loop (`wisp.serve.store.offload`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from wisp.jsontypes import JSON
from wisp.serve import egress, shapes
from wisp.serve.http import EventStream, HttpError, Request, Response, Router
from wisp.serve.store.base import Store, every
from wisp.serve.store.offload import off_loop
from wisp.serve.webhooks import KIND, MAX_ENDPOINTS, endpoint_document, hub, public

Route = Callable[[Request], Awaitable[Response | EventStream]]


def add_routes(router: Router, store: Store, wrap: Callable[[Route], Route] = lambda r: r
               ) -> None:
    """The endpoint-management routes; `wrap` is applied to each handler (the API's
    error mapping)."""
    routes = _Routes(store)
    for method, path, handler in (
        ("POST", "/v1/webhook_endpoints", routes.create),
        ("GET", "/v1/webhook_endpoints", routes.list),
        ("GET", "/v1/webhook_endpoints/{endpoint_id}", routes.get),
        ("DELETE", "/v1/webhook_endpoints/{endpoint_id}", routes.delete),
    ):
        router.add(method, path, wrap(handler))


class _Routes:
    def __init__(self, store: Store) -> None:
        self.store = store

    async def create(self, request: Request) -> Response | EventStream:
        doc = endpoint_document(request.json(), allow_private=egress.private_allowed())
        await off_loop(self.store, self._create, request.owner, doc)
        hub(self.store).forget(request.owner)
        return Response(200, doc)

    def _create(self, owner: str, doc: JSON) -> None:
        if sum(1 for _ in every(self.store, KIND, owner)) >= MAX_ENDPOINTS:
            raise HttpError(400, "invalid_request_error",
                            f"at most {MAX_ENDPOINTS} webhook endpoints per API key")
        self.store.create(KIND, owner, doc)

    async def list(self, request: Request) -> Response | EventStream:
        query = shapes.resources_query(request.query)
        page = await off_loop(self.store, self.store.list, KIND, request.owner,
                              limit=query["limit"], page=query["page"])
        return Response(200, shapes.list_page([public(d) for d in page.items],
                                              page.next_page))

    async def get(self, request: Request) -> Response | EventStream:
        return Response(200, public(await self._found(request)))

    async def delete(self, request: Request) -> Response | EventStream:
        doc = await self._found(request)
        await off_loop(self.store, self.store.delete, KIND, request.owner, doc["id"])
        hub(self.store).forget(request.owner)
        return Response(200, {"id": doc["id"], "type": "webhook_endpoint_deleted"})

    async def _found(self, request: Request) -> JSON:
        endpoint_id = request.params["endpoint_id"]
        doc = await off_loop(self.store, self.store.get, KIND, request.owner, endpoint_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"webhook_endpoint {endpoint_id} not found")
        return doc
