"""Memory updates racing another writer (tests/serve/memory_scenarios.py covers the rest
through the SDK). Another writer's change is made to land between this update's read and
its write, deterministically (`tests.serve.interleave`), on a real SQLite store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.serve.interleave import OtherWriteFirst
from wisp.serve import memory
from wisp.serve.http import HttpError
from wisp.serve.memory import MemoryStores, api_actor, memories_kind
from wisp.serve.memory_tool import MemoryTool
from wisp.serve.shapes import memory as memory_shapes
from wisp.serve.store.sqlite import SqliteStore
from wisp.tools.base import ToolContext

OWNER = "owner-a"


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = SqliteStore(tmp_path / "store.db")
    yield opened
    opened.close()


def made(store: SqliteStore) -> tuple[str, str]:
    """A memory store with one memory, /a.md = "one": their ids."""
    doc = memory_shapes.store_create({"name": "notes"})
    store.create(memory.STORE, OWNER, doc)
    note = MemoryStores(store, OWNER).create(doc["id"], "/a.md", "one", api_actor(OWNER))
    return doc["id"], note["id"]


def test_an_update_keeps_the_change_that_landed_after_its_read(store: SqliteStore) -> None:
    store_id, memory_id = made(store)
    other = MemoryStores(store, OWNER)

    racing_store = OtherWriteFirst(store, "memory:")
    racing_store.arm(lambda: other.update(store_id, memory_id, {"content": "two"},
                                          api_actor(OWNER)))
    racing = MemoryStores(racing_store, OWNER)  # type: ignore[arg-type]
    moved = racing.update(store_id, memory_id, {"path": "/b.md"}, api_actor(OWNER))
    assert racing_store.fired
    stored = store.get(memories_kind(store_id), OWNER, memory_id) or {}
    assert (stored["path"], stored["content"]) == ("/b.md", "two")  # both changes kept
    assert moved == stored
    # Each version is a state the memory really had, the current one last: the version
    # the lost first try wrote (path moved, content "one") is gone.
    versions = other.versions(store_id)
    assert [(v["path"], v["content"]) for v in versions] == [
        ("/b.md", "two"), ("/a.md", "two"), ("/a.md", "one")]
    assert versions[0]["id"] == stored["memory_version_id"]


def test_a_precondition_is_checked_against_what_would_be_overwritten(
        store: SqliteStore) -> None:
    store_id, memory_id = made(store)
    other = MemoryStores(store, OWNER)

    racing_store = OtherWriteFirst(store, "memory:")
    racing_store.arm(lambda: other.update(store_id, memory_id, {"content": "two"},
                                          api_actor(OWNER)))
    racing = MemoryStores(racing_store, OWNER)  # type: ignore[arg-type]
    with pytest.raises(HttpError, match="precondition") as refused:
        racing.update(store_id, memory_id, {"content": "three",
                                            "precondition": memory_shapes.digest("one")},
                      api_actor(OWNER))
    assert racing_store.fired and refused.value.status == 409
    stored = store.get(memories_kind(store_id), OWNER, memory_id) or {}
    assert stored["content"] == "two"
    assert [v["content"] for v in other.versions(store_id)] == ["two", "one"]


def test_the_memory_tool_refuses_an_edit_of_content_changed_since_it_read_it(
        store: SqliteStore, tmp_path: Path) -> None:
    """An agent's str_replace edits the content it read: when another session wrote the
    memory in between, the edit is refused (the agent views it again) instead of
    overwriting that write with an edit of the old content."""
    store_id, memory_id = made(store)
    other = MemoryStores(store, OWNER)

    racing = OtherWriteFirst(store, "memory:")
    racing.arm(lambda: other.update(store_id, memory_id, {"content": "one and two"},
                                    api_actor(OWNER)))
    attached = [{"type": "memory_store", "memory_store_id": store_id, "name": "notes",
                 "mount_path": "/mnt/memory/notes", "access": "read_write"}]
    tool = MemoryTool(racing, OWNER, "sesn_1", attached)  # type: ignore[arg-type]
    edit = {"command": "str_replace", "path": "/mnt/memory/notes/a.md",
            "old_str": "one", "new_str": "uno"}
    refused = asyncio.run(tool.run(edit, ToolContext(tmp_path)))
    assert racing.fired and refused.is_error and "changed by another writer" in str(refused.content)
    assert (store.get(memories_kind(store_id), OWNER, memory_id) or {})["content"] == (
        "one and two")
    done = asyncio.run(tool.run(edit, ToolContext(tmp_path)))  # read again: it applies
    assert not done.is_error, done.content
    assert (store.get(memories_kind(store_id), OWNER, memory_id) or {})["content"] == (
        "uno and two")
