"""The Files API (`client.beta.files`): upload (multipart, streamed to disk as it
arrives), list, metadata, download (streamed from disk) and delete.

A file's bytes live in `<files dir>/<owner>/<file id>` (the files dir is the service's
data folder's `files/`); its metadata is a store document of kind `file`, with the path
of its bytes kept out of what clients see. A file uploaded with `expires_in_seconds` is
gone (404, left out of lists, its bytes removed) once it expires.
"""

from __future__ import annotations

import contextlib
import mimetypes
import os
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.http import EventStream, FileBody, HttpError, Request, Response, Router
from wisp.serve.multipart import Multipart, Part, boundary_of
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop

Route = Callable[[Request], Awaitable[Response | EventStream]]
KIND = "file"
_INTERNAL = ("path",)
_MAX_FIELD = 64


def public(doc: Mapping[str, Any]) -> JSON:
    return {k: v for k, v in doc.items() if k not in _INTERNAL}


def file_document(file_id: str, filename: str, mime_type: str, size: int, *,
                  expires_at: str | None, path: str) -> shapes.FileDocument:
    """An uploaded file's document (BetaFileMetadata, plus where its bytes are)."""
    return {"id": file_id, "type": "file", "filename": filename, "mime_type": mime_type,
            "size_bytes": size, "created_at": shapes.timestamp(), "downloadable": True,
            "expires_at": expires_at, "scope": None, "path": path}


def expired(doc: Mapping[str, Any], now: str | None = None) -> bool:
    return doc.get("expires_at") is not None and str(doc["expires_at"]) <= (
        now or shapes.timestamp())


class Files:
    def __init__(self, store: Store, root: Path) -> None:
        self.store = store
        self.root = root

    def found(self, owner: str, file_id: str) -> shapes.FileDocument:
        """The file's document (404 when it is not this owner's, or has expired)."""
        doc = self.store.get(KIND, owner, file_id)
        if doc is not None and expired(doc):
            self.remove(owner, doc)
            doc = None
        if doc is None:
            raise HttpError(404, "not_found_error", f"file {file_id} not found")
        return shapes.as_file(doc)

    def remove(self, owner: str, doc: Mapping[str, Any]) -> None:
        self.store.delete(KIND, owner, doc["id"])
        with contextlib.suppress(FileNotFoundError):
            Path(doc["path"]).unlink()

    async def upload(self, owner: str, request: Request) -> shapes.FileDocument:
        parser = Multipart(boundary_of(request.headers.get("content-type", "")))
        folder = self.root / owner
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        file_id = shapes.new_id("file")
        target = folder / file_id
        received = await _receive(parser, request, target)
        if received.part is None:
            target.unlink(missing_ok=True)
            raise shapes.ShapeError("file", "required")
        return await off_loop(self.store, self._saved, owner, file_id, target, received)

    def _saved(self, owner: str, file_id: str, target: Path,
               received: _Received) -> shapes.FileDocument:
        part = received.part
        assert part is not None
        name = PurePosixPath((part.filename or "").replace("\\", "/")).name
        mime = part.content_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        doc = file_document(file_id, name or "unnamed", mime, received.size,
                            expires_at=_expiry(received.expires_in), path=str(target))
        self.store.create(KIND, owner, doc)
        return doc


class _Received:
    def __init__(self) -> None:
        self.part: Part | None = None
        self.size = 0
        self.expires_in: int | None = None


async def _receive(parser: Multipart, request: Request, target: Path) -> _Received:
    """Writes the `file` part to `target` as it arrives; reads `expires_in_seconds`."""
    received = _Received()
    current: Part | None = None
    field = b""
    try:
        with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                       "wb") as out:
            async for event in parser.feed_all(request.body_stream.chunks()):
                if isinstance(event, Part):
                    current = _begin(event, received)
                elif current is not None and current.name == "file":
                    out.write(event)
                    received.size += len(event)
                else:
                    field += event
                    if len(field) > _MAX_FIELD:
                        raise shapes.ShapeError("expires_in_seconds", "too long")
        if field:
            received.expires_in = _seconds(field)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return received


def _begin(part: Part, received: _Received) -> Part:
    if part.name not in ("file", "expires_in_seconds"):
        raise shapes.ShapeError(part.name, "unknown field")
    if part.name == "file":
        if received.part is not None:
            raise shapes.ShapeError("file", "only one file per upload")
        received.part = part
    return part


def _seconds(raw: bytes) -> int:
    text = raw.decode("ascii", "replace").strip()
    if not text.isdigit() or not 3600 <= int(text) <= 7_776_000:
        raise shapes.ShapeError("expires_in_seconds", "expected an integer from 3600 to "
                                "7776000")
    return int(text)


def _expiry(seconds: int | None) -> str | None:
    if seconds is None:
        return None
    moment = datetime.now(UTC) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def add_routes(router: Router, files: Files, wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(files)
    router.add("POST", "/v1/files", wrap(routes.upload), stream_body=True)
    for method, path, handler in (
        ("GET", "/v1/files", routes.list),
        ("GET", "/v1/files/{file_id}", routes.metadata),
        ("DELETE", "/v1/files/{file_id}", routes.delete),
        ("GET", "/v1/files/{file_id}/content", routes.download),
    ):
        router.add(method, path, wrap(handler))


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`."""

    def __init__(self, files: Files) -> None:
        self.files = files
        self.store = files.store

    def _listed(self, owner: str, query: JSON) -> shapes.Page[JSON]:
        """A page of the owner's files, or those `ids` names (off the loop)."""
        if query["ids"] is not None:
            docs = [self.store.get(KIND, owner, i) for i in query["ids"]]
            items = [d for d in docs if d is not None and not expired(d)]
            return shapes.list_page([public(d) for d in items])
        page = self.store.list(KIND, owner, limit=query["limit"], page=query["page"])
        now = shapes.timestamp()
        items = [d for d in page.items if not expired(d, now)
                 and (query["scope_id"] is None
                      or (d.get("scope") or {}).get("id") == query["scope_id"])]
        return shapes.list_page([public(d) for d in items], page.next_page)

    def _removed(self, owner: str, file_id: str) -> str:
        doc = self.files.found(owner, file_id)
        self.files.remove(owner, doc)
        return doc["id"]

    async def upload(self, request: Request) -> Response:
        return Response(200, public(await self.files.upload(request.owner, request)))

    async def list(self, request: Request) -> Response:
        query = shapes.files_query(request.query)
        return Response(200, await off_loop(self.store, self._listed, request.owner, query))

    async def metadata(self, request: Request) -> Response:
        return Response(200, public(await off_loop(self.store, self.files.found,
                                                   request.owner, request.params["file_id"])))

    async def download(self, request: Request) -> Response:
        doc = await off_loop(self.store, self.files.found, request.owner,
                             request.params["file_id"])
        return Response(200, FileBody(Path(doc["path"]), int(doc["size_bytes"]),
                                      str(doc["mime_type"])))

    async def delete(self, request: Request) -> Response:
        file_id = await off_loop(self.store, self._removed, request.owner,
                                 request.params["file_id"])
        return Response(200, {"id": file_id, "type": "file_deleted"})
