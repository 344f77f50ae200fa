"""Session stores: where a host keeps its sessions' transcripts instead of (or besides) the
local disk, with the official SDK's `SessionStore` contract.

A store keeps lists of transcript entries (JSON objects, opaque to it) under a key: a
project (`project_key`, the sanitised cwd of `wisp.paths.project_key`), a session
id, and for a subagent's transcript a `subpath` (`subagents/agent-<id>`). `append` adds in
call order, `load` returns them all (None for a key never written). Two stores come with
wisp: `InMemorySessionStore` (tests, one process) and `SqliteSessionStore` (one file,
durable). Both pass the official conformance suite (`claude_agent_sdk.testing`), without
its optional `list_session_summaries`, which neither implements.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from wisp.jsontypes import JSON

SessionStoreFlushMode = Literal["batched", "eager"]


class SessionKey(TypedDict):
    project_key: str
    session_id: str
    subpath: NotRequired[str]


class SessionListSubkeysKey(TypedDict):
    project_key: str
    session_id: str


class SessionStoreListEntry(TypedDict):
    session_id: str
    mtime: int  # epoch milliseconds of the last write


class SessionSummaryEntry(TypedDict):
    session_id: str
    mtime: int
    data: JSON


SessionStoreEntry = JSON  # one transcript line; `type` is always there


class SessionStore:
    """The contract: `append` and `load` are required; `list_sessions`, `delete` and
    `list_subkeys` are optional (these defaults say a store lacks them)."""

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        raise NotImplementedError

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        raise NotImplementedError

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        raise NotImplementedError

    async def delete(self, key: SessionKey) -> None:
        raise NotImplementedError

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        raise NotImplementedError


class _Clock:
    """Epoch milliseconds that never repeat or go back within a store, so two appends in
    the same millisecond still order."""

    def __init__(self) -> None:
        self._last = 0

    def now(self) -> int:
        self._last = max(int(time.time() * 1000), self._last + 1)
        return self._last


class InMemorySessionStore(SessionStore):
    """Entries in a dict; gone when the process ends."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], list[SessionStoreEntry]] = {}
        self._mtimes: dict[tuple[str, str], int] = {}
        self._clock = _Clock()

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        if not entries:
            return
        slot = (key["project_key"], key["session_id"], key.get("subpath") or "")
        self._entries.setdefault(slot, []).extend(json.loads(json.dumps(entries)))
        if not slot[2]:
            self._mtimes[slot[:2]] = self._clock.now()

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        found = self._entries.get((key["project_key"], key["session_id"],
                                   key.get("subpath") or ""))
        return json.loads(json.dumps(found)) if found is not None else None

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        return [{"session_id": sid, "mtime": mtime}
                for (project, sid), mtime in self._mtimes.items() if project == project_key]

    async def delete(self, key: SessionKey) -> None:
        subpath = key.get("subpath") or ""
        session = (key["project_key"], key["session_id"])
        for slot in list(self._entries):
            if slot[:2] == session and (not subpath or slot[2] == subpath):
                del self._entries[slot]
        if not subpath:
            self._mtimes.pop(session, None)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        session = (key["project_key"], key["session_id"])
        return sorted(slot[2] for slot in self._entries if slot[:2] == session and slot[2])


_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project_key TEXT NOT NULL, session_id TEXT NOT NULL, subpath TEXT NOT NULL,
    entry TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entries_key ON entries (project_key, session_id, subpath, seq);
CREATE TABLE IF NOT EXISTS sessions (
    project_key TEXT NOT NULL, session_id TEXT NOT NULL, mtime INTEGER NOT NULL,
    PRIMARY KEY (project_key, session_id));
"""


class SqliteSessionStore(SessionStore):
    """Entries in one SQLite file (`:memory:` for a private in-memory database). Calls run
    in a worker thread, one at a time, each in its own transaction."""

    def __init__(self, path: str | Path) -> None:
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._clock = _Clock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    async def _run(self, work: Any, *args: Any) -> Any:
        def locked() -> Any:
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    result = work(*args)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                return result

        return await asyncio.to_thread(locked)

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        if entries:
            await self._run(self._append, key, [json.dumps(e) for e in entries])

    def _append(self, key: SessionKey, texts: list[str]) -> None:
        row = (key["project_key"], key["session_id"], key.get("subpath") or "")
        self._db.executemany(
            "INSERT INTO entries (project_key, session_id, subpath, entry) VALUES (?,?,?,?)",
            [(*row, text) for text in texts])
        if not row[2]:
            self._db.execute("INSERT INTO sessions VALUES (?,?,?) ON CONFLICT DO UPDATE SET "
                             "mtime = excluded.mtime", (*row[:2], self._clock.now()))

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        rows = await self._run(self._select, "SELECT entry FROM entries WHERE project_key = ? "
                               "AND session_id = ? AND subpath = ? ORDER BY seq",
                               (key["project_key"], key["session_id"],
                                key.get("subpath") or ""))
        return [json.loads(text) for (text,) in rows] if rows else None

    def _select(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return list(self._db.execute(sql, args).fetchall())

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        rows = await self._run(self._select, "SELECT session_id, mtime FROM sessions "
                               "WHERE project_key = ?", (project_key,))
        return [{"session_id": sid, "mtime": mtime} for sid, mtime in rows]

    async def delete(self, key: SessionKey) -> None:
        await self._run(self._delete, key)

    def _delete(self, key: SessionKey) -> None:
        session = (key["project_key"], key["session_id"])
        subpath = key.get("subpath") or ""
        if subpath:
            self._db.execute("DELETE FROM entries WHERE project_key = ? AND session_id = ? "
                             "AND subpath = ?", (*session, subpath))
            return
        self._db.execute("DELETE FROM entries WHERE project_key = ? AND session_id = ?",
                         session)
        self._db.execute("DELETE FROM sessions WHERE project_key = ? AND session_id = ?",
                         session)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        rows = await self._run(self._select, "SELECT DISTINCT subpath FROM entries WHERE "
                               "project_key = ? AND session_id = ? AND subpath != '' "
                               "ORDER BY subpath", (key["project_key"], key["session_id"]))
        return [subpath for (subpath,) in rows]


def file_path_to_session_key(file_path: str, projects_dir: str) -> SessionKey | None:
    """The key of a transcript file under `projects_dir`:
    `<project>/<session>.jsonl`, or `<project>/<session>/subagents/agent-<id>.jsonl` (its
    subpath without `.jsonl`); None for any other path."""
    try:
        parts = Path(file_path).resolve().relative_to(Path(projects_dir).resolve()).parts
    except ValueError:
        return None
    if len(parts) == 2 and parts[1].endswith(".jsonl"):
        return {"project_key": parts[0], "session_id": parts[1].removesuffix(".jsonl")}
    if len(parts) >= 4 and parts[-1].endswith(".jsonl"):
        subpath = "/".join(parts[2:]).removesuffix(".jsonl")
        return {"project_key": parts[0], "session_id": parts[1], "subpath": subpath}
    return None
