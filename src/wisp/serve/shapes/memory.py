"""Memory stores, memories and memory versions (`client.beta.memory_stores.*`): the
request bodies and queries, checked as the SDK documents them, and the documents.

A memory's path starts with `/`, has 1 to 20 non-empty segments (never `.` or `..`), no
control or format characters nor U+2028/U+2029, is in NFC and at most 1,024 bytes. A
memory's content is UTF-8 text of at most 102,400 bytes."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Final

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    ShapeError,
    _at,
    _choice,
    _get,
    _metadata,
    _obj,
    _patch_metadata,
    _required,
    _str,
    new_id,
    timestamp,
)
from wisp.serve.shapes.queries import _created, _known, _limit, _one

MAX_CONTENT: Final = 102_400
OPERATIONS: Final = ("created", "modified", "deleted")
VIEWS: Final = ("basic", "full")
_CREATED: Final = ("created_at[gte]", "created_at[lte]")
_SEPARATORS: Final = frozenset("\u2028\u2029")


def memory_path(value: object, path: str) -> str:
    text = _str(value, path, empty=False)
    segments = text.split("/")[1:]
    if not text.startswith("/") or not 1 <= len(segments) <= 20:
        raise ShapeError(path, "expected a path starting with / of 1 to 20 segments")
    if any(s in ("", ".", "..") for s in segments):
        raise ShapeError(path, "a segment cannot be empty, '.' or '..'")
    if any(c in _SEPARATORS or unicodedata.category(c) in ("Cc", "Cf") for c in text):
        raise ShapeError(path, "control and format characters are not allowed")
    if unicodedata.normalize("NFC", text) != text:
        raise ShapeError(path, "expected Unicode Normalization Form C")
    if len(text.encode()) > 1024:
        raise ShapeError(path, "longer than 1024 bytes")
    return text


def content(value: object, path: str) -> str:
    text = _str(value, path)
    if len(text.encode()) > MAX_CONTENT:
        raise ShapeError(path, f"longer than {MAX_CONTENT} bytes")
    return text


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sha(value: object, path: str) -> str:
    text = _str(value, path)
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise ShapeError(path, "expected 64 lowercase hexadecimal characters")
    return text


def _name(value: object, path: str) -> str:
    text = _str(value, path, empty=False, limit=255)
    if any(unicodedata.category(c) == "Cc" for c in text):
        raise ShapeError(path, "control characters are not allowed")
    return text


def _description(value: object, path: str) -> str:
    return _str(value, path, limit=1024)


# Memory stores ------------------------------------------------------------------------

def store_create(body: object) -> JSON:
    obj = _obj(body, "")
    now = timestamp()
    return {"id": new_id("memstore"), "type": "memory_store",
            "name": _name(_required(obj, "name", ""), "name"),
            "description": _get(obj, "description", "", _description, ""),
            "metadata": _get(obj, "metadata", "", _metadata, {}),
            "created_at": now, "updated_at": now, "archived_at": None}


def store_updated(doc: JSON, body: object) -> JSON:
    """The store after `POST /v1/memory_stores/{id}`; `updated_at` moves only when
    something changed."""
    obj = _obj(body, "")
    new = dict(doc)
    if obj.get("name") is not None:
        new["name"] = _name(obj["name"], "name")
    if obj.get("description") is not None:
        new["description"] = _description(obj["description"], "description")
    if obj.get("metadata") is not None:
        patch = _metadata(obj["metadata"], "metadata", patch=True)
        new["metadata"] = _patch_metadata(doc.get("metadata") or {}, patch)
    if new != doc:
        new["updated_at"] = timestamp()
    return new


def slug(name: str) -> str:
    """The store's folder under /mnt/memory/: lowercased, every run of characters other
    than ASCII letters and digits one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "store"


# Memories -----------------------------------------------------------------------------

def memory_create(body: object) -> JSON:
    obj = _obj(body, "")
    if obj.get("content") is None:
        raise ShapeError("content", "required (pass \"\" for an empty memory)")
    return {"path": memory_path(_required(obj, "path", ""), "path"),
            "content": content(obj["content"], "content")}


def memory_update(body: object) -> JSON:
    """Only what the body sets: `content`, `path`, and `precondition` (the expected
    `content_sha256`, or None)."""
    obj = _obj(body, "")
    out: JSON = {"precondition": _get(obj, "precondition", "", _precondition)}
    if obj.get("content") is not None:
        out["content"] = content(obj["content"], "content")
    if obj.get("path") is not None:
        out["path"] = memory_path(obj["path"], "path")
    return out


def _precondition(value: object, path: str) -> str:
    obj = _obj(value, path)
    _choice(obj.get("type"), _at(path, "type"), ("content_sha256",))
    return _sha(_required(obj, "content_sha256", path), _at(path, "content_sha256"))


def version_id() -> str:
    return new_id("memver")


def memory_document(store_id: str, path: str, text: str, version_id: str) -> JSON:
    now = timestamp()
    return {"id": new_id("mem"), "type": "memory", "memory_store_id": store_id,
            "path": path, "content": text, "content_sha256": digest(text),
            "content_size_bytes": len(text.encode()), "memory_version_id": version_id,
            "created_at": now, "updated_at": now}


def version_document(memory: JSON, operation: str, actor: JSON) -> JSON:
    """The version recording `operation` on `memory` (as it is after the change)."""
    gone = operation == "deleted"
    return {"id": memory["memory_version_id"], "type": "memory_version",
            "memory_id": memory["id"], "memory_store_id": memory["memory_store_id"],
            "operation": operation, "path": memory["path"],
            "content": None if gone else memory["content"],
            "content_sha256": None if gone else memory["content_sha256"],
            "content_size_bytes": None if gone else memory["content_size_bytes"],
            "created_at": timestamp(), "created_by": actor,
            "redacted_at": None, "redacted_by": None}


def redacted(version: JSON, actor: JSON) -> JSON:
    return {**version, "content": None, "path": None, "content_sha256": None,
            "content_size_bytes": None, "redacted_at": timestamp(), "redacted_by": actor}


def viewed(doc: JSON, view: str) -> JSON:
    """A memory or version as a response shows it: `basic` leaves `content` null."""
    return doc if view == "full" else {**doc, "content": None}


# Queries ------------------------------------------------------------------------------

Query = Mapping[str, Sequence[str]]


def view_query(query: Query, default: str) -> str:
    _known(query, ("view",))
    return _choice(_one(query, "view") or default, "view", VIEWS)


def _listing(query: Query, allowed: Sequence[str]) -> JSON:
    _known(query, ("limit", "page", "view", *allowed))
    view = _choice(_one(query, "view") or "basic", "view", VIEWS)
    # With `full`, a page holds at most 20 items (the SDK's documented cap).
    return {"view": view, "limit": _limit(query, 20, 20 if view == "full" else 100),
            "page": _one(query, "page")}


def stores_query(query: Query) -> JSON:
    _known(query, ("limit", "page", "include_archived", *_CREATED))
    raw = (_one(query, "include_archived") or "false").lower()
    return {"limit": _limit(query, 20, 100), "page": _one(query, "page"),
            "include_archived": _choice(raw, "include_archived", ("true", "false")) == "true",
            **_created(query)}


def memories_query(query: Query) -> JSON:
    out = _listing(query, ("depth", "path_prefix"))
    prefix = _one(query, "path_prefix")
    if prefix is not None and (not prefix.startswith("/") or not prefix.endswith("/")):
        raise ShapeError("path_prefix", "expected a prefix starting and ending with /")
    depth = _one(query, "depth") or "0"
    if not depth.isdigit():
        raise ShapeError("depth", "expected a non-negative integer")
    return {**out, "path_prefix": prefix or "/", "depth": int(depth)}


def versions_query(query: Query) -> JSON:
    out = _listing(query, ("api_key_id", "memory_id", "operation", "session_id",
                           "service_account_id", *_CREATED))
    operation = _one(query, "operation")
    return {**out, **_created(query), "memory_id": _one(query, "memory_id"),
            "operation": None if operation is None else _choice(operation, "operation",
                                                                OPERATIONS),
            "api_key_id": _one(query, "api_key_id"), "session_id": _one(query, "session_id"),
            "service_account_id": _one(query, "service_account_id")}


def delete_query(query: Query) -> str | None:
    _known(query, ("expected_content_sha256",))
    expected = _one(query, "expected_content_sha256")
    return None if expected is None else _sha(expected, "expected_content_sha256")
