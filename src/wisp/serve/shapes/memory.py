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
from typing import Final, TypedDict, TypeVar

from wisp.jsontypes import JSON
from wisp.serve.shapes.common import (
    ShapeError,
    child_path,
    new_id,
    optional_field,
    patched_metadata,
    read_choice,
    read_metadata,
    read_object,
    read_str,
    required_field,
    timestamp,
)
from wisp.serve.shapes.companions import (
    MemoryDocument,
    MemoryStoreDocument,
    MemoryVersionDocument,
    Operation,
    as_memory_store,
)
from wisp.serve.shapes.documents import editable
from wisp.serve.shapes.queries import check_known_params, created_bounds, query_limit, query_value

MAX_CONTENT: Final = 102_400
OPERATIONS: Final = ("created", "modified", "deleted")
VIEWS: Final = ("basic", "full")
_CREATED: Final = ("created_at[gte]", "created_at[lte]")
_SEPARATORS: Final = frozenset("\u2028\u2029")


def memory_path(value: object, path: str) -> str:
    text = read_str(value, path, empty=False)
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
    text = read_str(value, path)
    if len(text.encode()) > MAX_CONTENT:
        raise ShapeError(path, f"longer than {MAX_CONTENT} bytes")
    return text


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sha(value: object, path: str) -> str:
    text = read_str(value, path)
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise ShapeError(path, "expected 64 lowercase hexadecimal characters")
    return text


def _name(value: object, path: str) -> str:
    text = read_str(value, path, empty=False, limit=255)
    if any(unicodedata.category(c) == "Cc" for c in text):
        raise ShapeError(path, "control characters are not allowed")
    return text


def _description(value: object, path: str) -> str:
    return read_str(value, path, limit=1024)


# Memory stores ------------------------------------------------------------------------

def store_create(body: object) -> MemoryStoreDocument:
    obj = read_object(body, "")
    now = timestamp()
    return {"id": new_id("memstore"), "type": "memory_store",
            "name": _name(required_field(obj, "name", ""), "name"),
            "description": optional_field(obj, "description", "", _description, ""),
            "metadata": optional_field(obj, "metadata", "", read_metadata, {}),
            "created_at": now, "updated_at": now, "archived_at": None}


def store_updated(doc: MemoryStoreDocument, body: object) -> MemoryStoreDocument:
    """The store after `POST /v1/memory_stores/{id}`; `updated_at` moves only when
    something changed."""
    obj = read_object(body, "")
    new = editable(doc)
    if obj.get("name") is not None:
        new["name"] = _name(obj["name"], "name")
    if obj.get("description") is not None:
        new["description"] = _description(obj["description"], "description")
    if obj.get("metadata") is not None:
        patch = read_metadata(obj["metadata"], "metadata", patch=True)
        new["metadata"] = patched_metadata(doc.get("metadata") or {}, patch)
    if new != doc:
        new["updated_at"] = timestamp()
    return as_memory_store(new)


def slug(name: str) -> str:
    """The store's folder under /mnt/memory/: lowercased, every run of characters other
    than ASCII letters and digits one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "store"


# Memories -----------------------------------------------------------------------------

class MemoryCreate(TypedDict):
    """The body of `POST .../memories`, normalised."""

    path: str
    content: str


class MemoryChange(TypedDict, total=False):
    """The body of `POST .../memories/{id}`: what it sets, and the `content_sha256` the
    client expects the memory to have (None or absent: no precondition; the agent's memory
    tool sends the one it read with an edit, none with a whole-file create)."""

    precondition: str | None
    content: str
    path: str


def memory_create(body: object) -> MemoryCreate:
    obj = read_object(body, "")
    if obj.get("content") is None:
        raise ShapeError("content", "required (pass \"\" for an empty memory)")
    return {"path": memory_path(required_field(obj, "path", ""), "path"),
            "content": content(obj["content"], "content")}


def memory_update(body: object) -> MemoryChange:
    """Only what the body sets: `content`, `path`, and `precondition` (the expected
    `content_sha256`, or None)."""
    obj = read_object(body, "")
    out: MemoryChange = {"precondition": optional_field(obj, "precondition", "", _precondition)}
    if obj.get("content") is not None:
        out["content"] = content(obj["content"], "content")
    if obj.get("path") is not None:
        out["path"] = memory_path(obj["path"], "path")
    return out


def _precondition(value: object, path: str) -> str:
    obj = read_object(value, path)
    read_choice(obj.get("type"), child_path(path, "type"), ("content_sha256",))
    return _sha(required_field(obj, "content_sha256", path), child_path(path, "content_sha256"))


def version_id() -> str:
    return new_id("memver")


def memory_document(store_id: str, path: str, text: str, version_id: str) -> MemoryDocument:
    now = timestamp()
    return {"id": new_id("mem"), "type": "memory", "memory_store_id": store_id,
            "path": path, "content": text, "content_sha256": digest(text),
            "content_size_bytes": len(text.encode()), "memory_version_id": version_id,
            "created_at": now, "updated_at": now}


def version_document(memory: MemoryDocument, operation: Operation,
                     actor: JSON) -> MemoryVersionDocument:
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


def redacted(version: MemoryVersionDocument, actor: JSON) -> MemoryVersionDocument:
    return {**version, "content": None, "path": None, "content_sha256": None,
            "content_size_bytes": None, "redacted_at": timestamp(), "redacted_by": actor}


Viewed = TypeVar("Viewed", MemoryDocument, MemoryVersionDocument)


def viewed(doc: Viewed, view: str) -> Viewed:
    """A memory or version as a response shows it: `basic` leaves `content` null."""
    if view == "full":
        return doc
    shown = doc.copy()
    shown["content"] = None
    return shown


# Queries ------------------------------------------------------------------------------

Query = Mapping[str, Sequence[str]]


def view_query(query: Query, default: str) -> str:
    check_known_params(query, ("view",))
    return read_choice(query_value(query, "view") or default, "view", VIEWS)


def _listing(query: Query, allowed: Sequence[str]) -> JSON:
    check_known_params(query, ("limit", "page", "view", *allowed))
    view = read_choice(query_value(query, "view") or "basic", "view", VIEWS)
    # With `full`, a page holds at most 20 items (the SDK's documented cap).
    return {"view": view, "limit": query_limit(query, 20, 20 if view == "full" else 100),
            "page": query_value(query, "page")}


def stores_query(query: Query) -> JSON:
    check_known_params(query, ("limit", "page", "include_archived", *_CREATED))
    raw = (query_value(query, "include_archived") or "false").lower()
    return {"limit": query_limit(query, 20, 100), "page": query_value(query, "page"),
            "include_archived": read_choice(raw, "include_archived", ("true", "false")) == "true",
            **created_bounds(query)}


def memories_query(query: Query) -> JSON:
    out = _listing(query, ("depth", "path_prefix"))
    prefix = query_value(query, "path_prefix")
    if prefix is not None and (not prefix.startswith("/") or not prefix.endswith("/")):
        raise ShapeError("path_prefix", "expected a prefix starting and ending with /")
    depth = query_value(query, "depth") or "0"
    if not depth.isdigit():
        raise ShapeError("depth", "expected a non-negative integer")
    return {**out, "path_prefix": prefix or "/", "depth": int(depth)}


def versions_query(query: Query) -> JSON:
    out = _listing(query, ("api_key_id", "memory_id", "operation", "session_id",
                           "service_account_id", *_CREATED))
    operation = query_value(query, "operation")
    return {**out, **created_bounds(query), "memory_id": query_value(query, "memory_id"),
            "operation": None if operation is None else read_choice(operation, "operation",
                                                                    OPERATIONS),
            "api_key_id": query_value(query, "api_key_id"),
            "session_id": query_value(query, "session_id"),
            "service_account_id": query_value(query, "service_account_id")}


def delete_query(query: Query) -> str | None:
    check_known_params(query, ("expected_content_sha256",))
    expected = query_value(query, "expected_content_sha256")
    return None if expected is None else _sha(expected, "expected_content_sha256")
