"""wisp.sdk's session stores pass the official SDK's store conformance suite
(`claude_agent_sdk.testing.run_session_store_conformance`): in memory and on SQLite."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path

import pytest

from wisp.sdk.session_store import (
    InMemorySessionStore,
    SqliteSessionStore,
    file_path_to_session_key,
)
from wisp.testing import reply

testing = pytest.importorskip("claude_agent_sdk.testing")


def test_the_in_memory_store_conforms():
    asyncio.run(testing.run_session_store_conformance(InMemorySessionStore))


def test_the_sqlite_store_conforms(tmp_path: Path):
    made: list[SqliteSessionStore] = []

    def make() -> SqliteSessionStore:
        made.append(SqliteSessionStore(tmp_path / f"store-{len(made)}.db"))
        return made[-1]

    asyncio.run(testing.run_session_store_conformance(make))
    for store in made:
        store.close()


def test_the_sqlite_store_keeps_its_entries_across_opens(tmp_path: Path):
    key = {"project_key": "p", "session_id": "s"}
    first = SqliteSessionStore(tmp_path / "kept.db")
    asyncio.run(first.append(key, [{"type": "user", "uuid": "u1"}]))
    first.close()
    again = SqliteSessionStore(tmp_path / "kept.db")
    assert asyncio.run(again.load(key)) == [{"type": "user", "uuid": "u1"}]
    again.close()


def test_file_paths_map_to_keys(tmp_path: Path):
    root = str(tmp_path / "projects")
    assert file_path_to_session_key(f"{root}/-w/abc.jsonl", root) == {
        "project_key": "-w", "session_id": "abc"}
    assert file_path_to_session_key(f"{root}/-w/abc/subagents/agent-7.jsonl", root) == {
        "project_key": "-w", "session_id": "abc", "subpath": "subagents/agent-7"}
    assert file_path_to_session_key(str(tmp_path / "elsewhere.jsonl"), root) is None


def test_wisp_sdk_mirrors_into_a_store_and_resumes_from_it(server, tmp_path, make_options):
    """Both transports: the session reaches wisp's SQLite store as it runs, and with the
    local transcripts gone a resume comes from the store alone."""
    from wisp.sdk import ResultMessage, get_session_messages_from_store, query

    server.script(reply.text("noted"), reply.text("it was 42"))
    config = tmp_path / "config"
    store = SqliteSessionStore(tmp_path / "sessions.db")
    options = make_options(session_store=store, env={"CLAUDE_CONFIG_DIR": str(config)})

    async def run(prompt: str, **extra: object) -> ResultMessage:
        found = [m async for m in query(prompt=prompt,
                                        options=dataclasses.replace(options, **extra))]
        return next(m for m in found if isinstance(m, ResultMessage))

    first = asyncio.run(run("remember 42"))
    stored = asyncio.run(get_session_messages_from_store(store, first.session_id,
                                                         options.cwd))
    assert [m.type for m in stored] == ["user", "assistant"]
    shutil.rmtree(config / "projects")
    second = asyncio.run(run("what was it?", resume=first.session_id))
    assert (second.is_error, second.result) == (False, "it was 42")
    assert "remember 42" in str(server.requests[-1].body["messages"][0]["content"])
    # The resumed turn was mirrored too, under the same key.
    after = asyncio.run(get_session_messages_from_store(store, first.session_id, options.cwd))
    assert [m.type for m in after] == ["user", "assistant", "user", "assistant"]
    store.close()
