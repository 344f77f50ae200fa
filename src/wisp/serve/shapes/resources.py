"""Session resources: the `resources` of `POST /v1/sessions` and the body of
`POST /v1/sessions/{id}/resources`, and the resource documents. `file` resources are
mounted in the workspace and `memory_store` ones reached through the memory tool;
`github_repository` is refused."""

from __future__ import annotations

import posixpath
from typing import Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    ShapeError,
    child_path,
    new_id,
    read_choice,
    read_items,
    read_object,
    read_optional_str,
    read_str,
    required_field,
    timestamp,
)
from wisp.serve.shapes.documents import SessionResource, as_session_resource

RESOURCE_TYPES: Final = ("file", "github_repository", "memory_store")
DEFAULT_MOUNT: Final = "/mnt/session/uploads/"


def _mount_path(value: object, path: str) -> str:
    text = read_str(value, path, empty=False, limit=1024)
    clean = posixpath.normpath(text)
    if not text.startswith("/") or clean == "/" or ".." in text.split("/") or "\0" in text:
        raise ShapeError(path, "expected an absolute path below /, without '..'")
    return clean


def resource_param(value: object, path: str) -> JSON:
    """One resource to mount, normalised: {"type": "file", "file_id", "mount_path"}."""
    obj = read_object(value, path)
    kind = read_choice(obj.get("type"), child_path(path, "type"), RESOURCE_TYPES)
    if kind == "memory_store":
        return _memory_store_param(obj, path)
    if kind != "file":
        raise ShapeError(child_path(path, "type"), f"{kind} resources are not supported by this "
                         "server yet")
    file_id = read_str(required_field(obj, "file_id", path), child_path(path, "file_id"),
                       empty=False)
    mount = read_optional_str(obj.get("mount_path"), child_path(path, "mount_path"))
    return {"type": "file", "file_id": file_id,
            "mount_path": _mount_path(mount, child_path(path, "mount_path")) if mount
            else DEFAULT_MOUNT + file_id}


def _memory_store_param(obj: JSON, path: str) -> JSON:
    """{"type": "memory_store", "memory_store_id", "access", "instructions"}; the store's
    name, description and mount path are filled in from the store when it is attached."""
    if obj.get("mount_path") is not None:
        raise ShapeError(child_path(path, "mount_path"), "output-only for memory_store resources "
                         "(derived from the store's name)")
    store_id = read_str(required_field(obj, "memory_store_id", path),
                        child_path(path, "memory_store_id"),
                        empty=False)
    access = obj.get("access") or "read_write"
    instructions = obj.get("instructions")
    return {"type": "memory_store", "memory_store_id": store_id,
            "access": read_choice(access, child_path(path, "access"), ("read_write", "read_only")),
            "instructions": None if instructions is None else read_str(
                instructions, child_path(path, "instructions"), limit=4096)}


def resource_params(value: object, path: str) -> list[JSON]:
    resources = read_items(value, path, resource_param)
    keys = [r.get("mount_path") or r.get("memory_store_id") for r in resources]
    for i, key in enumerate(keys):
        if key in keys[:i]:
            where = "mount_path" if resources[i]["type"] == "file" else "memory_store_id"
            raise ShapeError(f"{path}[{i}].{where}", f"{key} is attached twice")
    return resources


def resource_document(param: JSON, *, now: str | None = None) -> SessionResource:
    """A file resource gets an id and timestamps; a memory store resource has neither
    (the SDK's `BetaManagedAgentsMemoryStoreResource`): it is named by its store."""
    if param["type"] == "memory_store":
        return as_session_resource(dict(param))
    now = now or timestamp()
    # `resource_param`'s three keys, in its order
    return {"id": new_id("sesrsc"), "type": "file", "file_id": param["file_id"],
            "mount_path": param["mount_path"], "created_at": now, "updated_at": now}
