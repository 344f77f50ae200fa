"""The memory routes (`client.beta.memory_stores`, `.memories`, `.memory_versions`).

Lists of memories are ordered by path and of versions newest first; both page with an
offset cursor over the store's documents, filtered here (every filter the SDK sends is
applied; a parameter the SDK does not send is a 400)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.http import EventStream, HttpError, Request, Response, Router
from wisp.serve.memory import STORE, MemoryStores, api_actor
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop

Route = Callable[[Request], Awaitable[Response | EventStream]]
_STORES = "/v1/memory_stores"
_STORE = _STORES + "/{memory_store_id}"
_MEMORY = _STORE + "/memories/{memory_id}"
_VERSION = _STORE + "/memory_versions/{memory_version_id}"


def add_routes(router: Router, store: Store, wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store)
    for method, path, handler in (
        ("POST", _STORES, routes.create_store),
        ("GET", _STORES, routes.list_stores),
        ("GET", _STORE, routes.retrieve_store),
        ("POST", _STORE, routes.update_store),
        ("DELETE", _STORE, routes.delete_store),
        ("POST", _STORE + "/archive", routes.archive_store),
        ("POST", _STORE + "/memories", routes.create_memory),
        ("GET", _STORE + "/memories", routes.list_memories),
        ("GET", _MEMORY, routes.retrieve_memory),
        ("POST", _MEMORY, routes.update_memory),
        ("DELETE", _MEMORY, routes.delete_memory),
        ("GET", _STORE + "/memory_versions", routes.list_versions),
        ("GET", _VERSION, routes.retrieve_version),
        ("POST", _VERSION + "/redact", routes.redact_version),
    ):
        router.add(method, path, wrap(handler))


T = TypeVar("T")


def _offset_page(items: list[T], page: str | None, limit: int) -> shapes.Page[T]:
    if page is not None and not page.isdigit():
        raise HttpError(400, "invalid_request_error", "page: invalid page cursor")
    start = int(page or 0)
    end = start + limit
    return shapes.list_page(items[start:end], str(end) if end < len(items) else None)


def _depth_items(memories: list[JSON], prefix: str, depth: int) -> list[JSON]:
    """Memories below `prefix`; with `depth`, those deeper are rolled up into one
    `memory_prefix` marker per folder at that depth."""
    out: list[JSON] = []
    seen: set[str] = set()
    for memory in memories:
        if not memory["path"].startswith(prefix):
            continue
        rest = memory["path"][len(prefix):].split("/")
        if depth == 0 or len(rest) <= depth:
            out.append(memory)
            continue
        folder = prefix + "/".join(rest[:depth]) + "/"
        if folder not in seen:
            seen.add(folder)
            out.append({"type": "memory_prefix", "path": folder})
    return out


def _version_matches(version: Mapping[str, Any], query: JSON) -> bool:
    actor = version.get("created_by") or {}
    return (query["memory_id"] in (None, version["memory_id"])
            and query["operation"] in (None, version["operation"])
            and query["api_key_id"] in (None, actor.get("api_key_id"))
            and query["session_id"] in (None, actor.get("session_id"))
            and query["service_account_id"] in (None, actor.get("service_account_id"))
            and shapes.created_within(version, query))


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`. A
    `MemoryStores` call is one hop, however many store calls it makes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _stores(self, request: Request) -> MemoryStores:
        return MemoryStores(self.store, request.owner)

    # Stores ---------------------------------------------------------------------------

    async def create_store(self, request: Request) -> Response:
        doc = memory_shapes.store_create(request.json())
        await off_loop(self.store, self.store.create, STORE, request.owner, doc)
        return Response(200, doc)

    async def list_stores(self, request: Request) -> Response:
        query = memory_shapes.stores_query(request.query)
        page = await off_loop(self.store, self.store.list, STORE, request.owner,
                              limit=query["limit"], page=query["page"],
                              include_archived=query["include_archived"])
        items = [doc for doc in page.items if shapes.created_within(doc, query)]
        return Response(200, shapes.list_page(items, page.next_page))

    async def retrieve_store(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._stores(request).found,
                                            request.params["memory_store_id"]))

    async def update_store(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._stores(request).update_store,
                                            request.params["memory_store_id"],
                                            request.json()))

    async def delete_store(self, request: Request) -> Response:
        store_id = request.params["memory_store_id"]
        await off_loop(self.store, self._stores(request).delete_store, store_id)
        return Response(200, {"id": store_id, "type": "memory_store_deleted"})

    async def archive_store(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._stores(request).archive_store,
                                            request.params["memory_store_id"]))

    # Memories -------------------------------------------------------------------------

    async def create_memory(self, request: Request) -> Response:
        view = memory_shapes.view_query(request.query, "basic")
        fields = memory_shapes.memory_create(request.json())
        doc = await off_loop(self.store, self._stores(request).create,
                             request.params["memory_store_id"], fields["path"],
                             fields["content"], api_actor(request.owner))
        return Response(200, memory_shapes.viewed(doc, view))

    async def list_memories(self, request: Request) -> Response:
        query = memory_shapes.memories_query(request.query)
        memories = await off_loop(self.store, self._stores(request).memories,
                                  request.params["memory_store_id"])
        found = _depth_items(memories, query["path_prefix"], query["depth"])
        items: list[Mapping[str, Any]] = [
            memory_shapes.viewed(shapes.as_memory(m), query["view"])
            if m["type"] == "memory" else m for m in found]
        return Response(200, _offset_page(items, query["page"], query["limit"]))

    async def retrieve_memory(self, request: Request) -> Response:
        view = memory_shapes.view_query(request.query, "full")
        doc = await off_loop(self.store, self._stores(request).memory,
                             request.params["memory_store_id"], request.params["memory_id"])
        return Response(200, memory_shapes.viewed(doc, view))

    async def update_memory(self, request: Request) -> Response:
        view = memory_shapes.view_query(request.query, "basic")
        change = memory_shapes.memory_update(request.json())
        doc = await off_loop(self.store, self._stores(request).update,
                             request.params["memory_store_id"], request.params["memory_id"],
                             change, api_actor(request.owner))
        return Response(200, memory_shapes.viewed(doc, view))

    async def delete_memory(self, request: Request) -> Response:
        expected = memory_shapes.delete_query(request.query)
        memory_id = request.params["memory_id"]
        await off_loop(self.store, self._stores(request).delete,
                       request.params["memory_store_id"], memory_id, expected,
                       api_actor(request.owner))
        return Response(200, {"id": memory_id, "type": "memory_deleted"})

    # Versions -------------------------------------------------------------------------

    async def list_versions(self, request: Request) -> Response:
        query = memory_shapes.versions_query(request.query)
        versions = await off_loop(self.store, self._stores(request).versions,
                                  request.params["memory_store_id"])
        items = [memory_shapes.viewed(v, query["view"]) for v in versions
                 if _version_matches(v, query)]
        return Response(200, _offset_page(items, query["page"], query["limit"]))

    async def retrieve_version(self, request: Request) -> Response:
        view = memory_shapes.view_query(request.query, "full")
        doc = await off_loop(self.store, self._stores(request).version,
                             request.params["memory_store_id"],
                             request.params["memory_version_id"])
        return Response(200, memory_shapes.viewed(doc, view))

    async def redact_version(self, request: Request) -> Response:
        doc = await off_loop(self.store, self._stores(request).redact,
                             request.params["memory_store_id"],
                             request.params["memory_version_id"], api_actor(request.owner))
        return Response(200, memory_shapes.viewed(doc, "full"))
