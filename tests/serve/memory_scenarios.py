"""What the memory tests do through the official SDK, on whichever store the service
runs on (SQLite here, PostgreSQL in tests/serve/pg): the memory API's whole surface, and
a session whose agent writes to an attached store with the memory tool."""

from __future__ import annotations

import hashlib
from typing import Any

import pydantic
import pytest

from tests.serve.harness import anthropic, cloud_setup, user_message, wait_for
from wisp.testing import ScriptedServer, reply

JSON = dict[str, Any]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def strict(value: object) -> None:
    """Every field of a parsed SDK object is one the SDK declares."""
    if isinstance(value, pydantic.BaseModel):
        assert not value.model_extra, f"{type(value).__name__}: {value.model_extra}"
        for field in type(value).model_fields:
            strict(getattr(value, field))
    elif isinstance(value, list):
        for item in value:
            strict(item)


def memory_api(client: Any) -> None:
    """Stores made, changed, archived and deleted; memories written, listed, renamed
    and deleted under preconditions; their versions listed, filtered and redacted."""
    made, other = stores_made(client)
    note, changed = memories_written(client, made)
    versions_kept(client, made, note, changed)
    stores_archived(client, made, other)


def stores_made(client: Any) -> tuple[Any, Any]:
    stores = client.beta.memory_stores
    made = stores.create(name="User Preferences!", description="what the user likes",
                         metadata={"user": "u1"})
    strict(made)
    assert (made.type, made.name, made.archived_at) == ("memory_store", "User Preferences!",
                                                        None)
    other = stores.create(name="scratch")
    updated = stores.update(made.id, description="likes and dislikes",
                            metadata={"user": None, "team": "t"})
    assert (updated.description, updated.metadata) == ("likes and dislikes", {"team": "t"})
    assert stores.retrieve(made.id).description == "likes and dislikes"
    return made, other


def memories_written(client: Any, made: Any) -> tuple[Any, Any]:
    memories = client.beta.memory_stores.memories
    note = memories.create(made.id, path="/prefs/food.md", content="likes tea")
    strict(note)
    assert note.content is None  # create answers `basic` by default
    assert (note.content_sha256, note.content_size_bytes) == (sha("likes tea"), 9)
    memories.create(made.id, path="/prefs/deep/colour.md", content="blue")
    memories.create(made.id, path="/top.md", content="", view="full")
    with pytest.raises(anthropic.ConflictError):
        memories.create(made.id, path="/top.md", content="again")
    for bad in ("no-slash", "/a//b", "/a/../b", "/a\u2028b", "/e\u0301"):
        with pytest.raises(anthropic.BadRequestError, match="path"):
            memories.create(made.id, path=bad, content="x")
    with pytest.raises(anthropic.BadRequestError, match="content"):
        memories.create(made.id, path="/big.md", content="x" * 102_401)
    got = memories.retrieve(note.id, memory_store_id=made.id)
    assert got.content == "likes tea"  # retrieve answers `full`

    listed = list(memories.list(made.id))
    strict(listed)
    assert [m.path for m in listed] == ["/prefs/deep/colour.md", "/prefs/food.md", "/top.md"]
    assert all(m.content is None for m in listed)
    shallow = list(memories.list(made.id, path_prefix="/prefs/", depth=1, view="full"))
    assert [(m.type, m.path) for m in shallow] == [("memory_prefix", "/prefs/deep/"),
                                                   ("memory", "/prefs/food.md")]
    assert shallow[1].content == "likes tea"
    paged = memories.list(made.id, limit=2)
    assert len(paged.data) == 2 and paged.next_page is not None
    assert len(list(paged)) == 3  # the SDK follows next_page
    with pytest.raises(anthropic.BadRequestError, match="path_prefix"):
        memories.list(made.id, path_prefix="/prefs")

    with pytest.raises(anthropic.ConflictError, match="precondition"):
        memories.update(note.id, memory_store_id=made.id, content="likes coffee",
                        precondition={"type": "content_sha256", "content_sha256": sha("x")})
    changed = memories.update(note.id, memory_store_id=made.id, content="likes coffee",
                              path="/prefs/drink.md", view="full",
                              precondition={"type": "content_sha256",
                                            "content_sha256": sha("likes tea")})
    assert (changed.id, changed.path, changed.content) == (note.id, "/prefs/drink.md",
                                                           "likes coffee")
    same = memories.update(note.id, memory_store_id=made.id, content="likes coffee")
    assert same.memory_version_id == changed.memory_version_id  # no change, no version
    return note, changed


def versions_kept(client: Any, made: Any, note: Any, changed: Any) -> None:
    memories = client.beta.memory_stores.memories
    versions = client.beta.memory_stores.memory_versions
    history = list(versions.list(made.id, memory_id=note.id))
    strict(history)
    assert [v.operation for v in history] == ["modified", "created"]  # newest first
    assert history[0].id == changed.memory_version_id
    assert history[1].created_by.type == "api_actor"
    first = versions.retrieve(history[1].id, memory_store_id=made.id)
    assert (first.content, first.path) == ("likes tea", "/prefs/food.md")
    assert versions.retrieve(history[1].id, memory_store_id=made.id,
                             view="basic").content is None
    with pytest.raises(anthropic.ConflictError):  # the memory's current content
        versions.redact(history[0].id, memory_store_id=made.id)
    gone = versions.redact(history[1].id, memory_store_id=made.id)
    strict(gone)
    assert gone.redacted_at is not None and gone.redacted_by.type == "api_actor"
    assert (gone.content, gone.path, gone.content_sha256, gone.content_size_bytes) == (
        None, None, None, None)
    assert versions.retrieve(history[1].id, memory_store_id=made.id).content is None

    with pytest.raises(anthropic.ConflictError):
        memories.delete(note.id, memory_store_id=made.id, expected_content_sha256=sha("no"))
    deleted = memories.delete(note.id, memory_store_id=made.id,
                              expected_content_sha256=sha("likes coffee"))
    strict(deleted)
    assert (deleted.id, deleted.type) == (note.id, "memory_deleted")
    with pytest.raises(anthropic.NotFoundError):
        memories.retrieve(note.id, memory_store_id=made.id)
    lineage = list(versions.list(made.id, memory_id=note.id))
    assert [v.operation for v in lineage] == ["deleted", "modified", "created"]
    assert lineage[0].content_sha256 is None and lineage[0].path == "/prefs/drink.md"
    assert [v.operation for v in versions.list(made.id, operation="created")] == [
        "created"] * 3
    assert list(versions.list(made.id, session_id="sesn_none")) == []
    with pytest.raises(anthropic.BadRequestError, match="operation"):
        versions.list(made.id, operation="renamed")


def stores_archived(client: Any, made: Any, other: Any) -> None:
    stores = client.beta.memory_stores
    memories = stores.memories
    archived = stores.archive(other.id)
    assert archived.archived_at is not None
    assert [s.id for s in stores.list()] == [made.id]
    assert {s.id for s in stores.list(include_archived=True)} == {made.id, other.id}
    with pytest.raises(anthropic.BadRequestError, match="archived"):
        memories.create(other.id, path="/x.md", content="x")
    with pytest.raises(anthropic.BadRequestError, match="archived"):
        stores.update(other.id, name="renamed")
    dropped = stores.delete(other.id)
    strict(dropped)
    assert dropped.type == "memory_store_deleted"
    with pytest.raises(anthropic.NotFoundError):
        stores.retrieve(other.id)


def session_writes_memory(server: ScriptedServer, client: Any) -> None:
    """The agent of a session with an attached store creates a memory, edits it, views
    the store and reads back; each write is a version by that session; a read-only
    attachment refuses writes."""
    store = client.beta.memory_stores.create(name="Team Notes", description="shared notes")
    client.beta.memory_stores.memories.create(store.id, path="/seen.md", content="old")
    root = "/mnt/memory/team-notes"
    server.script(
        reply.tool_use("memory", {"command": "create", "path": f"{root}/plan.md",
                                  "file_text": "step one\n"}),
        reply.tool_use("memory", {"command": "str_replace", "path": f"{root}/plan.md",
                                  "old_str": "one", "new_str": "two"}),
        reply.tool_use("memory", {"command": "view", "path": root}),
        reply.tool_use("memory", {"command": "view", "path": f"{root}/seen.md"}),
        reply.text("noted"),
        reply.tool_use("memory", {"command": "create", "path": f"{root}/nope.md",
                                  "file_text": "x"}),
        reply.text("could not"))
    agent, environment = cloud_setup(client)
    session = client.beta.sessions.create(
        agent=agent.id, environment_id=environment.id,
        resources=[{"type": "memory_store", "memory_store_id": store.id,
                    "instructions": "keep the plan here"}])
    [resource] = session.resources
    strict(session.resources)
    assert (resource.type, resource.mount_path, resource.access, resource.name) == (
        "memory_store", root, "read_write", "Team Notes")
    assert [s.id for s in client.beta.sessions.list(memory_store_id=store.id)] == [session.id]
    with pytest.raises(anthropic.BadRequestError, match="when the session is created"):
        client.beta.sessions.resources.add(session.id, file_id="unused", type="file",
                                           extra_body={"type": "memory_store",
                                                       "memory_store_id": store.id})
    assert client.beta.sessions.resources.retrieve(
        store.id, session_id=session.id).mount_path == root
    client.beta.sessions.events.send(session.id, events=[user_message("plan it")])
    events = wait_for(client, session.id, lambda es: any(
        e["type"] == "session.status_idle" and e["stop_reason"]["type"] == "end_turn"
        for e in es))
    results = [e for e in events if e["type"] == "agent.tool_result"]
    assert [r["is_error"] for r in results] == [False] * 4, results
    texts = ["".join(b.get("text", "") for b in r["content"]) for r in results]
    assert "plan.md" in texts[2] and "seen.md" in texts[2]
    assert "old" in texts[3]
    first_request = next(r.body for r in server.requests if r.body and r.body.get("tools"))
    [tool] = [t for t in first_request["tools"] if t["name"] == "memory"]
    assert root in tool["description"] and "keep the plan here" in tool["description"]

    [plan] = [m for m in client.beta.memory_stores.memories.list(store.id, view="full")
              if m.path == "/plan.md"]
    assert plan.content == "step two\n"
    history = list(client.beta.memory_stores.memory_versions.list(
        store.id, memory_id=plan.id, view="full"))
    assert [(v.operation, v.content) for v in history] == [
        ("modified", "step two\n"), ("created", "step one\n")]
    assert {v.created_by.type for v in history} == {"session_actor"}
    assert {v.created_by.session_id for v in history} == {session.id}
    by_session = client.beta.memory_stores.memory_versions.list(store.id,
                                                                 session_id=session.id)
    assert len(list(by_session)) == 2

    reader = client.beta.sessions.create(
        agent=agent.id, environment_id=environment.id,
        resources=[{"type": "memory_store", "memory_store_id": store.id,
                    "access": "read_only"}])
    client.beta.sessions.events.send(reader.id, events=[user_message("write")])
    events = wait_for(client, reader.id, lambda es: any(
        e["type"] == "session.status_idle" and e["stop_reason"]["type"] == "end_turn"
        for e in es))
    [refused] = [e for e in events if e["type"] == "agent.tool_result"]
    assert refused["is_error"] and "read_only" in str(refused["content"])
    assert "/nope.md" not in [m.path for m in client.beta.memory_stores.memories.list(
        store.id)]
    client.beta.memory_stores.archive(store.id)
    with pytest.raises(anthropic.BadRequestError, match="archived"):
        client.beta.sessions.create(
            agent=agent.id, environment_id=environment.id,
            resources=[{"type": "memory_store", "memory_store_id": store.id}])
