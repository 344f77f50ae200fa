"""wisp.sdk's session stores pass the official SDK's store conformance suite
(`claude_agent_sdk.testing.run_session_store_conformance`): in memory and on SQLite."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from wisp.sdk.session_store import (
    InMemorySessionStore,
    SqliteSessionStore,
    file_path_to_session_key,
)

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
