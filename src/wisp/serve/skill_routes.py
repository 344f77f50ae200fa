"""The skills routes (`client.beta.skills`, `.versions`): create and version uploads
(multipart `files[]`, the SDK's form, and `display_name`), list, retrieve, delete, and
a version's files as a zip archive (`versions.download`).

Skills are listed newest first, versions newest first. Only custom skills exist here:
`source=anthropic` (or another source) lists nothing."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Awaitable, Callable

from wisp.serve import shapes
from wisp.serve.http import EventStream, Request, Response, Router
from wisp.serve.multipart import Multipart, Part, boundary_of
from wisp.serve.shapes import skills as skill_shapes
from wisp.serve.skills import SKILL, Skills, runnable, versions_kind
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop

Route = Callable[[Request], Awaitable[Response | EventStream]]
_SKILLS = "/v1/skills"
_SKILL = _SKILLS + "/{skill_id}"
_VERSION = _SKILL + "/versions/{version}"
_FILE_FIELDS = ("files[]", "files")
_MAX_FIELD = 1024


def add_routes(router: Router, store: Store, wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store)
    router.add("POST", _SKILLS, wrap(routes.create), stream_body=True)
    router.add("POST", _SKILL + "/versions", wrap(routes.create_version), stream_body=True)
    for method, path, handler in (
        ("GET", _SKILLS, routes.list_skills),
        ("GET", _SKILL, routes.retrieve),
        ("DELETE", _SKILL, routes.delete),
        ("GET", _SKILL + "/versions", routes.list_versions),
        ("GET", _VERSION, routes.retrieve_version),
        ("DELETE", _VERSION, routes.delete_version),
        ("GET", _VERSION + "/content", routes.download),
    ):
        router.add(method, path, wrap(handler))


class _Form:
    """A skill upload's parts: its files (name, bytes) and its text fields."""

    def __init__(self) -> None:
        self.files: list[tuple[str, bytearray]] = []
        self.fields: dict[str, bytearray] = {}
        self.size = 0


async def _read_form(request: Request, fields: tuple[str, ...]) -> _Form:
    """Reads the multipart body, refusing it once its files pass the upload ceiling
    (the parts are kept in memory: a skill is small)."""
    parser = Multipart(boundary_of(request.headers.get("content-type", "")))
    form = _Form()
    current: Part | None = None
    async for event in parser.feed_all(request.body_stream.chunks()):
        if isinstance(event, Part):
            current = event
            if event.name in _FILE_FIELDS:
                form.files.append((event.filename or "", bytearray()))
            elif event.name in fields:
                form.fields[event.name] = bytearray()
            else:
                raise shapes.ShapeError(event.name, "unknown field")
            continue
        assert current is not None
        if current.name in _FILE_FIELDS:
            form.size += len(event)
            if form.size > skill_shapes.MAX_UPLOAD:
                raise shapes.ShapeError("files", f"the files exceed "
                                        f"{skill_shapes.MAX_UPLOAD} bytes")
            form.files[-1][1].extend(event)
        else:
            form.fields[current.name] += event
            if len(form.fields[current.name]) > _MAX_FIELD:
                raise shapes.ShapeError(current.name, "too long")
    return form


def _text(raw: bytearray | None) -> str | None:
    return None if raw is None else raw.decode("utf-8", "replace")


def _files(form: _Form) -> list[tuple[str, bytes]]:
    return [(name, bytes(data)) for name, data in form.files]


def _zip(name: str, files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in sorted(files.items()):
            entry = zipfile.ZipInfo(f"{name}/{path}")
            entry.create_system = 3  # Unix: the mode below is one (the SDK reads it)
            entry.external_attr = (0o755 if runnable(data) else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return buffer.getvalue()


def _archive(skills: Skills, skill_id: str, version_id: str) -> bytes:
    """A version's files as a zip archive (off the loop: store reads, then zipping)."""
    version = skills.version(skill_id, version_id)
    return _zip(version["name"], skills.files(version["skill_id"], version["id"]))


def _delete_version(skills: Skills, skill_id: str, version_id: str) -> str:
    """Deletes the version (named by id or number); answers its id."""
    version = skills.version(skill_id, version_id)
    skills.delete_version(skill_id, version["id"])
    return version["id"]


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`. A `Skills`
    call is one hop, however many store calls it makes."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _skills(self, request: Request) -> Skills:
        return Skills(self.store, request.owner)

    async def create(self, request: Request) -> Response:
        form = await _read_form(request, ("display_name",))
        display = skill_shapes.display_name(_text(form.fields.get("display_name")))
        upload = skill_shapes.upload(_files(form))
        return Response(200, await off_loop(self.store, self._skills(request).create,
                                            display, upload))

    async def list_skills(self, request: Request) -> Response:
        query = skill_shapes.skills_query(request.query)
        if query["source"] not in (None, "custom"):
            return Response(200, shapes.list_page([]))  # only custom skills exist here
        page = await off_loop(self.store, self.store.list, SKILL, request.owner,
                              limit=query["limit"], page=query["page"])
        return Response(200, shapes.list_page(page.items, page.next_page))

    async def retrieve(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._skills(request).found,
                                            request.params["skill_id"]))

    async def delete(self, request: Request) -> Response:
        skill_id = request.params["skill_id"]
        await off_loop(self.store, self._skills(request).delete, skill_id)
        return Response(200, {"id": skill_id, "type": "skill_deleted"})

    async def create_version(self, request: Request) -> Response:
        skills = self._skills(request)
        # 404 before reading an upload
        await off_loop(self.store, skills.found, request.params["skill_id"])
        form = await _read_form(request, ())
        upload = skill_shapes.upload(_files(form))
        return Response(200, await off_loop(self.store, skills.add_version,
                                            request.params["skill_id"], upload))

    async def list_versions(self, request: Request) -> Response:
        query = skill_shapes.versions_query(request.query)
        skill_id = request.params["skill_id"]
        await off_loop(self.store, self._skills(request).found, skill_id)
        page = await off_loop(self.store, self.store.list, versions_kind(skill_id),
                              request.owner, limit=query["limit"], page=query["page"])
        return Response(200, shapes.list_page(page.items, page.next_page))

    async def retrieve_version(self, request: Request) -> Response:
        return Response(200, await off_loop(self.store, self._skills(request).version,
                                            request.params["skill_id"],
                                            request.params["version"]))

    async def delete_version(self, request: Request) -> Response:
        version_id = await off_loop(self.store, _delete_version, self._skills(request),
                                    request.params["skill_id"], request.params["version"])
        return Response(200, {"id": version_id, "type": "skill_version_deleted"})

    async def download(self, request: Request) -> Response:
        archive = await off_loop(self.store, _archive, self._skills(request),
                                 request.params["skill_id"], request.params["version"])
        return Response(200, archive, headers={"content-type": "application/zip"})
