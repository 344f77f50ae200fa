"""Session resources: the `resources` of `POST /v1/sessions` and the body of
`POST /v1/sessions/{id}/resources`, and the resource documents. Only `file` resources
are mounted by this server; `github_repository` and `memory_store` are refused."""

from __future__ import annotations

import posixpath
from typing import Final

from wisp.serve.shapes.common import (
    JSON,
    ShapeError,
    _at,
    _choice,
    _items,
    _obj,
    _opt_str,
    _required,
    _str,
    new_id,
    timestamp,
)

RESOURCE_TYPES: Final = ("file", "github_repository", "memory_store")
DEFAULT_MOUNT: Final = "/mnt/session/uploads/"


def _mount_path(value: object, path: str) -> str:
    text = _str(value, path, empty=False, limit=1024)
    clean = posixpath.normpath(text)
    if not text.startswith("/") or clean == "/" or ".." in text.split("/") or "\0" in text:
        raise ShapeError(path, "expected an absolute path below /, without '..'")
    return clean


def resource_param(value: object, path: str) -> JSON:
    """One resource to mount, normalised: {"type": "file", "file_id", "mount_path"}."""
    obj = _obj(value, path)
    kind = _choice(obj.get("type"), _at(path, "type"), RESOURCE_TYPES)
    if kind != "file":
        raise ShapeError(_at(path, "type"), f"{kind} resources are not supported by this "
                         "server yet")
    file_id = _str(_required(obj, "file_id", path), _at(path, "file_id"), empty=False)
    mount = _opt_str(obj.get("mount_path"), _at(path, "mount_path"))
    return {"type": "file", "file_id": file_id,
            "mount_path": _mount_path(mount, _at(path, "mount_path")) if mount
            else DEFAULT_MOUNT + file_id}


def resource_params(value: object, path: str) -> list[JSON]:
    resources = _items(value, path, resource_param)
    mounts = [r["mount_path"] for r in resources]
    for i, mount in enumerate(mounts):
        if mount in mounts[:i]:
            raise ShapeError(f"{path}[{i}].mount_path", f"{mount} is mounted twice")
    return resources


def resource_document(param: JSON, *, now: str | None = None) -> JSON:
    now = now or timestamp()
    return {"id": new_id("sesrsc"), **param, "created_at": now, "updated_at": now}
