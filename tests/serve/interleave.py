"""Races made deterministic: another writer's change lands between a read and the write
that follows it. The store is the real one; only the moment of the other write is
arranged, just before the first document write (`update`, `modify` or `delete`) of a
kind.

`call_route` runs one request through the real routes (the router, its handler, the
store calls they make) in this process, without the socket, so that a route's handler
can be raced on an `OtherWriteFirst` store."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from wisp.serve.http import HttpError, Request, Response, Router
from wisp.serve.http.router import path_segments
from wisp.serve.store.base import Store


class OtherWriteFirst:
    """`store`, where `other_write()` runs once, just before the first `update`,
    `modify` or `delete` (and `create`, with `on_create`) of a document whose kind
    starts with `kind_prefix` (armed by `arm`)."""

    def __init__(self, store: Store, kind_prefix: str, *, on_create: bool = False) -> None:
        self.store = store
        self.kind_prefix = kind_prefix
        self.on_create = on_create  # a `create` of the kind counts as a write too
        self.pending: Callable[[], object] | None = None
        self.fired = False

    def arm(self, other_write: Callable[[], object]) -> None:
        self.pending = other_write

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _before_write(self, kind: str) -> None:
        if kind.startswith(self.kind_prefix) and self.pending is not None:
            other_write, self.pending = self.pending, None
            other_write()
            self.fired = True

    def create(self, kind: str, *args: Any) -> Any:
        if self.on_create:
            self._before_write(kind)
        return self.store.create(kind, *args)

    def update(self, kind: str, *args: Any) -> Any:
        self._before_write(kind)
        return self.store.update(kind, *args)

    def modify(self, kind: str, *args: Any) -> Any:
        self._before_write(kind)
        return self.store.modify(kind, *args)

    def delete(self, kind: str, *args: Any, **kwargs: Any) -> Any:
        self._before_write(kind)
        return self.store.delete(kind, *args, **kwargs)


def call_route(router: Router, owner: str, method: str, target: str,
               body: object = None) -> tuple[int, Any]:
    """(status, JSON body) of `method target` (a path and its query) as `owner` (an
    HttpError gives its status and message)."""
    path, _, query = target.partition("?")
    request = Request(method, path, parse_qs(query), {},
                      b"" if body is None else json.dumps(body).encode(),
                      segments=path_segments(path))
    request.owner = owner
    handler, request.params = router.match(method, request.segments)
    try:
        response = asyncio.run(handler(request))
    except HttpError as exc:
        return exc.status, str(exc)
    except ValueError as exc:  # a ShapeError: the server answers 400
        return 400, str(exc)
    assert isinstance(response, Response)
    return response.status, response.body
