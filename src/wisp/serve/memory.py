"""Memory stores: what the memory routes and a session's memory tool both act through.

A store is a document of kind `memory_store`. Its memories are documents of kind
`memory:<store id>` and its versions of kind `memver:<store id>`, so each store's are
listed on their own (the store's per-kind index) and go with it when it is deleted.
Every change to a memory writes one version first, then the memory naming it as current:
a crash in between leaves a version the memory does not point at, never a memory whose
`memory_version_id` does not exist. A change that changes nothing writes no version.

An actor is who made a change: an `api_actor` (the key's owner id stands in for the key
id: wisp keeps no key ids) or a `session_actor` (a session's memory tool).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager

from wisp.jsontypes import JSON
from wisp.serve import shapes
from wisp.serve.exclusive import exclusive
from wisp.serve.http import HttpError
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.store.base import Change, Condition, Store, every

STORE = "memory_store"
# Tries of an update that finds the memory changed by another since it read it.
UPDATE_ATTEMPTS = 5
PATHS_LEASE = "memory_paths:"  # + store id: the lease of its creates and moves


def api_actor(owner: str) -> JSON:
    return {"type": "api_actor", "api_key_id": f"apikey_{owner[:24]}"}


def session_actor(session_id: str) -> JSON:
    return {"type": "session_actor", "session_id": session_id}


def memories_kind(store_id: str) -> str:
    return f"memory:{store_id}"


def versions_kind(store_id: str) -> str:
    return f"memver:{store_id}"


def unchanged_since(read: shapes.MemoryDocument) -> Condition:
    """Whether a memory as stored is still the one `read` (no change landed since)."""
    return lambda now: bool(now["memory_version_id"] == read["memory_version_id"])


def _not_archived(doc: shapes.MemoryStoreDocument) -> shapes.MemoryStoreDocument:
    if doc.get("archived_at"):
        raise HttpError(400, "invalid_request_error",
                        f"memory store {doc['id']} is archived: its memories cannot "
                        "be created or changed")
    return doc


def _conflict(message: str) -> HttpError:
    return HttpError(409, "invalid_request_error", message,
                     headers={"x-should-retry": "false"})


class MemoryStores:
    def __init__(self, store: Store, owner: str) -> None:
        self.store = store
        self.owner = owner

    def all(self, kind: str) -> Iterator[JSON]:
        """Every document of a kind, oldest first (archived ones too)."""
        return every(self.store, kind, self.owner, order="asc", include_archived=True)

    # Stores ---------------------------------------------------------------------------

    def found(self, store_id: str) -> shapes.MemoryStoreDocument:
        doc = self.store.get(STORE, self.owner, store_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"memory store {store_id} not found")
        return shapes.as_memory_store(doc)

    def writable(self, store_id: str) -> shapes.MemoryStoreDocument:
        return _not_archived(self.found(store_id))

    def update_store(self, store_id: str, body: object) -> shapes.MemoryStoreDocument:
        """`POST /v1/memory_stores/{id}`, made to the store as stored (`Store.modify`):
        a concurrent update or archive is neither lost nor undone."""
        def change(stored: JSON) -> shapes.MemoryStoreDocument:
            return memory_shapes.store_updated(
                _not_archived(shapes.as_memory_store(stored)), body)

        return shapes.as_memory_store(self._modified(store_id, change))

    def archive_store(self, store_id: str) -> shapes.MemoryStoreDocument:
        """Archived once, as stored (an update made meanwhile is kept)."""
        return shapes.as_memory_store(self._modified(store_id, shapes.archived_once))

    def _modified(self, store_id: str, change: Change) -> JSON:
        stored = self.store.modify(STORE, self.owner, store_id, change)
        if stored is None:
            raise HttpError(404, "not_found_error", f"memory store {store_id} not found")
        return stored

    def delete_store(self, store_id: str) -> None:
        self.found(store_id)
        for kind in (memories_kind(store_id), versions_kind(store_id)):
            for doc in list(self.all(kind)):
                self.store.delete(kind, self.owner, doc["id"])
        self.store.delete(STORE, self.owner, store_id)

    # Memories -------------------------------------------------------------------------

    def memory(self, store_id: str, memory_id: str) -> shapes.MemoryDocument:
        self.found(store_id)
        doc = self.store.get(memories_kind(store_id), self.owner, memory_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"memory {memory_id} not found")
        return shapes.as_memory(doc)

    def at_path(self, store_id: str, path: str) -> JSON | None:
        return next((m for m in self.all(memories_kind(store_id)) if m["path"] == path),
                    None)

    def memories(self, store_id: str) -> list[JSON]:
        return sorted(self.all(memories_kind(store_id)), key=lambda m: str(m["path"]))

    def _paths_held(self, store_id: str) -> AbstractContextManager[None]:
        """One path-taking write at a time per store (`exclusive`): that no other memory
        is at a path is read from the other memories, which a concurrent create or move
        would change between the check and the write."""
        return exclusive(self.store, f"{PATHS_LEASE}{store_id}", f"a memory of store "
                         f"{store_id} is being created or moved by another request")

    def create(self, store_id: str, path: str, text: str,
               actor: JSON) -> shapes.MemoryDocument:
        self.writable(store_id)
        with self._paths_held(store_id):
            if self.at_path(store_id, path) is not None:
                raise _conflict(f"path: a memory already exists at {path}")
            doc = memory_shapes.memory_document(store_id, path, text,
                                                memory_shapes.version_id())
            self._record(doc, "created", actor)
            self.store.create(memories_kind(store_id), self.owner, doc)
        return doc

    def update(self, store_id: str, memory_id: str, change: memory_shapes.MemoryChange,
               actor: JSON) -> shapes.MemoryDocument:
        """`change` holds `content` and/or `path`, and `precondition` (a sha or None).
        Made to the memory as it is when the write locks it (`Store.modify`): when
        another change landed since it was read, this one is worked out again (its
        version, written first, never became current and is dropped), so neither is lost
        and a precondition is checked against what is really overwritten. A move holds
        the store's paths (`_paths_held`)."""
        self.writable(store_id)
        if "path" not in change:
            return self._update(store_id, memory_id, change, actor)
        with self._paths_held(store_id):
            return self._update(store_id, memory_id, change, actor)

    def _update(self, store_id: str, memory_id: str, change: memory_shapes.MemoryChange,
                actor: JSON) -> shapes.MemoryDocument:
        for _ in range(UPDATE_ATTEMPTS):
            doc = self.memory(store_id, memory_id)
            new = self._updated(store_id, doc, change)
            if new is None:
                return doc  # nothing changes: no new version
            self._record(new, "modified", actor)
            if self._replaced(doc, new):
                return new
            self.store.delete(versions_kind(store_id), self.owner, new["memory_version_id"])
        raise _conflict(f"memory {memory_id} kept changing under this update: try again")

    def _replaced(self, doc: shapes.MemoryDocument, new: shapes.MemoryDocument) -> bool:
        """`doc` replaced by `new`, unless another change landed since `doc` was read."""
        def swap(now: JSON) -> shapes.MemoryDocument | None:
            return new if now["memory_version_id"] == doc["memory_version_id"] else None

        stored = self.store.modify(memories_kind(doc["memory_store_id"]), self.owner,
                                   doc["id"], swap)
        return stored is not None and stored["memory_version_id"] == new["memory_version_id"]

    def _updated(self, store_id: str, doc: shapes.MemoryDocument,
                 change: memory_shapes.MemoryChange) -> shapes.MemoryDocument | None:
        """The memory with `change` made, None when it changes nothing; 409 for a failed
        precondition or a path another memory has."""
        expected = change.get("precondition")
        if expected is not None and expected != doc["content_sha256"]:
            raise _conflict("precondition: the memory's content_sha256 is "
                            f"{doc['content_sha256']}, not {expected}")
        path = str(change.get("path", doc["path"]))
        text = str(change.get("content", doc["content"]))
        if path == doc["path"] and text == doc["content"]:
            return None
        if path != doc["path"] and self.at_path(store_id, path) is not None:
            raise _conflict(f"path: a memory already exists at {path}")
        return {
            **doc, "path": path, "content": text, "content_sha256": memory_shapes.digest(text),
            "content_size_bytes": len(text.encode()),
            "memory_version_id": memory_shapes.version_id(), "updated_at": shapes.timestamp()}

    def delete(self, store_id: str, memory_id: str, expected: str | None,
               actor: JSON) -> None:
        """Deletes the memory as it was read (`Store.delete(..., only_if=...)`): when
        another change landed since, the deletion is worked out again (its version,
        never made true, is dropped), so `expected` is checked against what is really
        deleted and the "deleted" version records that content."""
        for _ in range(UPDATE_ATTEMPTS):
            doc = self.memory(store_id, memory_id)
            if expected is not None and expected != doc["content_sha256"]:
                raise _conflict("expected_content_sha256: the memory's content_sha256 is "
                                f"{doc['content_sha256']}")
            gone: shapes.MemoryDocument = {**doc,
                                           "memory_version_id": memory_shapes.version_id()}
            self._record(gone, "deleted", actor)
            if self.store.delete(memories_kind(store_id), self.owner, memory_id,
                                 only_if=unchanged_since(doc)):
                return
            self.store.delete(versions_kind(store_id), self.owner, gone["memory_version_id"])
        raise _conflict(f"memory {memory_id} kept changing under this delete: try again")

    def _record(self, memory: shapes.MemoryDocument, operation: shapes.Operation,
                actor: JSON) -> None:
        version = memory_shapes.version_document(memory, operation, actor)
        self.store.create(versions_kind(memory["memory_store_id"]), self.owner, version)

    # Versions -------------------------------------------------------------------------

    def version(self, store_id: str, version_id: str) -> shapes.MemoryVersionDocument:
        self.found(store_id)
        doc = self.store.get(versions_kind(store_id), self.owner, version_id)
        if doc is None:
            raise HttpError(404, "not_found_error", f"memory version {version_id} not found")
        return shapes.as_memory_version(doc)

    def versions(self, store_id: str) -> list[shapes.MemoryVersionDocument]:
        """Newest first."""
        self.found(store_id)
        return [shapes.as_memory_version(v)
                for v in reversed(list(self.all(versions_kind(store_id))))]

    def redact(self, store_id: str, version_id: str,
               actor: JSON) -> shapes.MemoryVersionDocument:
        """Clears a version's content and path. The version holding a live memory's
        current content is refused: the memory would show what its history no longer
        has (update or delete the memory first)."""
        doc = self.version(store_id, version_id)
        live = self.store.get(memories_kind(store_id), self.owner, doc["memory_id"])
        if live is not None and live["memory_version_id"] == version_id:
            raise _conflict(f"memory version {version_id} holds the current content of "
                            f"memory {live['id']}: update or delete the memory first")
        def redact_once(stored: JSON) -> shapes.MemoryVersionDocument | None:
            # Redacted once: a concurrent redaction's time and actor are kept.
            version = shapes.as_memory_version(stored)
            return None if version.get("redacted_at") else memory_shapes.redacted(version,
                                                                                  actor)

        stored = self.store.modify(versions_kind(store_id), self.owner, version_id,
                                   redact_once)
        if stored is None:
            raise HttpError(404, "not_found_error", f"memory version {version_id} not found")
        return shapes.as_memory_version(stored)
