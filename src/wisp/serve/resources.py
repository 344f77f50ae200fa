"""Session resources (`client.beta.sessions.resources`): files mounted into a session's
workspace, memory stores attached (`attach_memory_stores`; the agent reaches them through
`wisp.serve.memory_tool`), and the routes that add, list, retrieve, update and delete them.

A resource is kept in its session's document (`resources`). A file resource's bytes
appear at `<workspace>/<mount_path>` (its path taken below the workspace root): the
driver copies each one in before a turn starts (`mount`), read-only (mode 0444), and
removes what a deleted resource had mounted. Only the session's own workspace gets it.
The mode stops wisp's write and edit tools; a process running as root (or bash that
changes the mode) is held off only by the OS sandbox of served sessions.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from wisp.jsontypes import JSON
from wisp.serve import files, shapes
from wisp.serve.http import EventStream, HttpError, Request, Response, Router
from wisp.serve.memory import STORE as MEMORY_STORE
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.store.base import Store
from wisp.serve.store.offload import off_loop

Route = Callable[[Request], Awaitable[Response | EventStream]]
_BASE = "/v1/sessions/{session_id}/resources"


def check_files(store: Store, owner: str, resources: Iterable[JSON], path: str) -> None:
    """Every file a resource names is the owner's (and has not expired)."""
    for i, resource in enumerate(resources):
        if resource["type"] != "file":
            continue
        doc = store.get(files.KIND, owner, resource["file_id"])
        if doc is None or files.expired(doc):
            raise HttpError(404, "not_found_error",
                            f"{path}[{i}].file_id: file {resource['file_id']} not found")


def checked(store: Store, owner: str, resources: list[JSON],
            path: str = "resources") -> list[JSON]:
    """A session's resources on create: files checked, memory stores attached."""
    check_files(store, owner, resources, path)
    return attach_memory_stores(store, owner, resources, path)


def attach_memory_stores(store: Store, owner: str, resources: list[JSON],
                         path: str) -> list[JSON]:
    """The resources with each memory store's name and description snapshotted and its
    mount path (`/mnt/memory/<slug of its name>`, made unique) filled in. The store must
    be the owner's and not archived."""
    taken: set[str] = set()
    out: list[JSON] = []
    for i, resource in enumerate(resources):
        if resource["type"] != "memory_store":
            out.append(resource)
            continue
        doc = store.get(MEMORY_STORE, owner, resource["memory_store_id"])
        where = f"{path}[{i}].memory_store_id"
        if doc is None:
            raise HttpError(404, "not_found_error",
                            f"{where}: memory store {resource['memory_store_id']} not found")
        if doc.get("archived_at"):
            raise HttpError(400, "invalid_request_error",
                            f"{where}: memory store {doc['id']} is archived")
        mount = _unique_mount("/mnt/memory/" + memory_shapes.slug(doc["name"]), taken)
        out.append({**resource, "name": doc["name"], "description": doc["description"],
                    "mount_path": mount})
    return out


def resource_id_of(resource: JSON) -> str:
    """A file resource's id; a memory store resource is named by its store's id."""
    return str(resource.get("id") or resource["memory_store_id"])


def _unique_mount(base: str, taken: set[str]) -> str:
    mount, n = base, 1
    while mount in taken:
        n += 1
        mount = f"{base}-{n}"
    taken.add(mount)
    return mount


def add_routes(router: Router, store: Store, wrap: Callable[[Route], Route]) -> None:
    routes = _Routes(store)
    for method, path, handler in (
        ("POST", _BASE, routes.add),
        ("GET", _BASE, routes.list),
        ("GET", f"{_BASE}/{{resource_id}}", routes.retrieve),
        ("POST", f"{_BASE}/{{resource_id}}", routes.update),
        ("DELETE", f"{_BASE}/{{resource_id}}", routes.delete),
    ):
        router.add(method, path, wrap(handler))


class _Routes:
    """Store calls run off the event loop (`off_loop`): see `wisp.serve.app`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def _session(self, request: Request) -> JSON:
        session_id = request.params["session_id"]
        doc = await off_loop(self.store, self.store.get, "session", request.owner, session_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"session {session_id} not found")
        return doc

    def _resource(self, session: JSON, request: Request) -> JSON:
        resource_id = request.params["resource_id"]
        for resource in session.get("resources") or []:
            if resource_id in (resource.get("id"), resource.get("memory_store_id")):
                return dict(resource)
        raise HttpError(404, "not_found_error", f"resource {resource_id} not found")

    def _save(self, owner: str, session: JSON, resources: list[Mapping[str, Any]]) -> None:
        """The change from `session`'s resources to `resources`, made to the session as
        it is now, in one locked read-modify-write: what another request (or the worker:
        status, usage) wrote since `session` was read is kept."""
        before = list(session.get("resources") or [])
        added = [r for r in resources if r not in before]
        removed = [r for r in before if r not in resources]

        def change(current: JSON) -> JSON:
            kept = [r for r in current.get("resources") or [] if r not in removed]
            if added:
                _check_additions(current, kept, added)
            return {**current, "resources": [*kept, *added], "updated_at": shapes.timestamp()}

        if self.store.modify("session", owner, session["id"], change) is None:
            raise HttpError(404, "not_found_error", f"session {session['id']} not found")

    async def add(self, request: Request) -> Response:
        session = await self._session(request)
        if session.get("archived_at") or session.get("status") == "terminated":
            raise HttpError(400, "invalid_request_error",
                            "resources cannot be added to an archived or terminated session")
        param = shapes.resource_param(request.json(), "")
        if param["type"] != "file":  # as the SDK's `resources.add` (type: "file")
            raise HttpError(400, "invalid_request_error",
                            f"type: {param['type']} resources are attached when the "
                            "session is created")
        await off_loop(self.store, check_files, self.store, request.owner, [param], "body")
        current = list(session.get("resources") or [])
        if any(r["mount_path"] == param["mount_path"] for r in current):
            raise HttpError(409, "invalid_request_error",
                            f"mount_path: {param['mount_path']} is already mounted",
                            headers={"x-should-retry": "false"})
        doc = shapes.resource_document(param)
        await off_loop(self.store, self._save, request.owner, session, [*current, doc])
        return Response(200, doc)

    async def list(self, request: Request) -> Response:
        session = await self._session(request)
        query = shapes.resources_query(request.query, allowed=("limit", "page"))
        resources = list(session.get("resources") or [])
        start = int(query["page"]) if (query["page"] or "").isdigit() else 0
        if query["page"] is not None and not query["page"].isdigit():
            raise HttpError(400, "invalid_request_error", "page: invalid page cursor")
        end = start + query["limit"]
        more = end < len(resources)
        return Response(200, shapes.list_page(resources[start:end],
                                              str(end) if more else None))

    async def retrieve(self, request: Request) -> Response:
        return Response(200, self._resource(await self._session(request), request))

    async def update(self, request: Request) -> Response:
        resource = self._resource(await self._session(request), request)
        raise HttpError(400, "invalid_request_error",
                        f"authorization_token applies to github_repository resources; "
                        f"{resource_id_of(resource)} is a {resource['type']} resource")

    async def delete(self, request: Request) -> Response:
        session = await self._session(request)
        resource = self._resource(session, request)
        await off_loop(self.store, self._save, request.owner, session,
                       [r for r in session.get("resources") or [] if r != resource])
        return Response(200, {"id": resource_id_of(resource),
                              "type": "session_resource_deleted"})


def _check_additions(session: JSON, kept: list[Any], added: list[Mapping[str, Any]]
                     ) -> None:
    """What `add` checked on the session it read, checked again on the session as it is
    when the write locks it (a request in between may have archived it, or taken the
    mount path)."""
    if session.get("archived_at") or session.get("status") == "terminated":
        raise HttpError(400, "invalid_request_error",
                        "resources cannot be added to an archived or terminated session")
    taken = {r.get("mount_path") for r in kept}
    for resource in added:
        if resource.get("mount_path") in taken:
            raise HttpError(409, "invalid_request_error",
                            f"mount_path: {resource['mount_path']} is already mounted",
                            headers={"x-should-retry": "false"})


# Mounting -----------------------------------------------------------------------------

def target(workspace: Path, mount_path: str) -> Path:
    """Where a mount path lands: below the workspace root, never outside it."""
    relative = mount_path.lstrip("/")
    place = (workspace / relative).resolve()
    if not place.is_relative_to(workspace.resolve()) or place == workspace.resolve():
        raise ValueError(f"mount path {mount_path} leaves the workspace")
    return place


MOUNTS = "session_mounts"  # store kind: what was mounted in a session's workspace


def mount(store: Store, owner: str, session: JSON, workspace: Path) -> list[str]:
    """Brings the workspace in line with the session's file resources: each one copied
    to its mount path, read-only; what a removed resource had mounted is deleted. What
    is mounted is kept in the store (kind `session_mounts`), since the next turn may be
    driven by another process. Answers the mounted paths."""
    record = store.get(MOUNTS, owner, session["id"])
    before: dict[str, str] = dict((record or {}).get("paths") or {})
    wanted = {r["id"]: r for r in session.get("resources") or [] if r.get("type") == "file"}
    after = {k: v for k, v in before.items() if k in wanted}
    for resource_id in before.keys() - wanted.keys():
        _unmount(Path(before[resource_id]))
    for resource_id, resource in wanted.items():
        if resource_id in after and Path(after[resource_id]).exists():
            continue
        doc = store.get(files.KIND, owner, resource["file_id"])
        if doc is None:
            continue  # deleted since: nothing to mount
        place = target(workspace, resource["mount_path"])
        _copy_read_only(Path(doc["path"]), place, workspace)
        after[resource_id] = str(place)
    if after == before:
        return list(after.values())
    mounts = {"id": session["id"], "paths": after, "created_at": shapes.timestamp()}
    if record is None:
        store.create(MOUNTS, owner, mounts)
    else:
        store.update(MOUNTS, owner, session["id"], mounts)
    return list(after.values())


def _copy_read_only(source: Path, place: Path, workspace: Path) -> None:
    folders = [p for p in place.parents if p.is_relative_to(workspace.resolve())
               and p != workspace.resolve()]
    for folder in reversed(folders):
        folder.mkdir(exist_ok=True, mode=0o755)
    with contextlib.suppress(FileNotFoundError):
        place.chmod(0o644)
        place.unlink()
    shutil.copyfile(source, place)
    place.chmod(0o444)


def _unmount(place: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(place)
