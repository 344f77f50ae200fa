"""The session helpers over a `SessionStore` (`*_from_store`, `*_via_store`,
`import_session_to_store`), and the subagent readers for sessions on disk
(`list_subagents`, `get_subagent_messages`), with the official SDK's signatures.

A store's entries are the transcript's lines, so the readers here are the disk readers'
(`wisp.sdk.sessions`) fed from the store: the same chain building, the same summary
lookup over the first and last 64 KiB of the lines. A project's key is the sanitised
directory (`wisp.paths.project_key`), the cwd when none is given.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from wisp import paths
from wisp.jsontypes import JSON
from wisp.sdk._session_chain import CHAIN_TYPES, conversation_chain, is_visible
from wisp.sdk._session_files import LITE_READ_BUF_SIZE, Lite, session_file
from wisp.sdk.session_store import SessionKey, SessionStore, SessionStoreEntry
from wisp.sdk.sessions import (
    ForkSessionResult,
    SDKSessionInfo,
    SessionMessage,
    info_from_lite,
)
from wisp.stamps import iso_now, new_uuid

IMPORT_BATCH = 500
AGENT_PREFIX = "agent-"


def project_key_for_directory(directory: str | None = None) -> str:
    return paths.project_key(os.path.realpath(directory or os.getcwd()))


def _key(session_id: str, directory: str | None, subpath: str | None = None) -> SessionKey:
    key: SessionKey = {"project_key": project_key_for_directory(directory),
                       "session_id": session_id}
    if subpath:
        key["subpath"] = subpath
    return key


def _implements(store: SessionStore, method: str) -> bool:
    found = getattr(type(store), method, None)
    return found is not None and found is not getattr(SessionStore, method, None)


def _lite(entries: list[SessionStoreEntry], mtime: int) -> Lite:
    text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries)
    data = text.encode()
    head = data[:LITE_READ_BUF_SIZE].decode("utf-8", errors="replace")
    tail = data[-LITE_READ_BUF_SIZE:].decode("utf-8", errors="replace")
    return Lite(mtime, len(data), head, tail)


def _chain_lines(entries: list[JSON]) -> list[JSON]:
    """The lines a conversation is built from (as `read_entries` keeps them on disk)."""
    return [e for e in entries if isinstance(e, dict) and e.get("type") in CHAIN_TYPES
            and isinstance(e.get("uuid"), str)]


def _messages(entries: list[JSON], limit: int | None, offset: int,
              parents: tuple[str | None, str | None] | None = None) -> list[SessionMessage]:
    """The conversation's messages; `parents` given: a subagent's, whose lines are all
    on its side chain."""
    entries = _chain_lines(entries)
    if parents is not None:  # a subagent's transcript is all side chain: that is its thread
        entries = [{**e, "isSidechain": False} for e in entries]
    tool, agent = parents if parents is not None else (None, None)
    found = [SessionMessage(type="user" if e.get("type") == "user" else "assistant",
                            uuid=e.get("uuid", ""), session_id=e.get("sessionId", ""),
                            message=e.get("message"), parent_tool_use_id=tool,
                            parent_agent_id=agent)
             for e in conversation_chain(entries) if is_visible(e)]
    if limit is not None and limit > 0:
        return found[offset:offset + limit]
    return found[offset:] if offset > 0 else found


def _parents(meta: Any) -> tuple[str | None, str | None]:
    """(the spawning tool call, the spawning subagent) from an agent's metadata."""
    if not isinstance(meta, dict):
        return None, None
    tool, agent = meta.get("toolUseId"), meta.get("parentAgentId")
    return (tool if isinstance(tool, str) else None, agent if isinstance(agent, str) else None)


# Reading a store -----------------------------------------------------------------------------


async def list_sessions_from_store(store: SessionStore, directory: str | None = None,
                                   limit: int | None = None, offset: int = 0
                                   ) -> list[SDKSessionInfo]:
    """The project's sessions, newest first, described as `list_sessions` describes them."""
    if not _implements(store, "list_sessions"):
        raise ValueError("session_store does not implement list_sessions()")
    project_key = project_key_for_directory(directory)
    found = []
    for listed in await store.list_sessions(project_key):
        entries = await store.load({"project_key": project_key,
                                    "session_id": listed["session_id"]})
        info = info_from_lite(listed["session_id"], _lite(entries, int(listed["mtime"])),
                     directory) if entries else None
        if info is not None:
            found.append(info)
    found.sort(key=lambda s: s.last_modified, reverse=True)
    found = found[offset:] if offset > 0 else found
    return found[:limit] if limit is not None and limit > 0 else found


async def get_session_info_from_store(store: SessionStore, session_id: str,
                                      directory: str | None = None) -> SDKSessionInfo | None:
    if not paths.is_uuid(session_id):
        return None
    entries = await store.load(_key(session_id, directory))
    if not entries:
        return None
    mtime = 0
    if _implements(store, "list_sessions"):
        listed = await store.list_sessions(project_key_for_directory(directory))
        mtime = next((int(s["mtime"]) for s in listed if s["session_id"] == session_id), 0)
    return info_from_lite(session_id, _lite(entries, mtime), directory)


async def get_session_messages_from_store(store: SessionStore, session_id: str,
                                          directory: str | None = None,
                                          limit: int | None = None, offset: int = 0
                                          ) -> list[SessionMessage]:
    if not paths.is_uuid(session_id):
        return []
    entries = await store.load(_key(session_id, directory))
    return _messages(entries, limit, offset) if entries else []


async def list_subagents_from_store(store: SessionStore, session_id: str,
                                    directory: str | None = None) -> list[str]:
    if not paths.is_uuid(session_id):
        return []
    if not _implements(store, "list_subkeys"):
        raise ValueError("session_store does not implement list_subkeys() -- cannot list "
                         "subagents")
    key = _key(session_id, directory)
    subkeys = await store.list_subkeys({"project_key": key["project_key"],
                                        "session_id": session_id})
    ids: list[str] = []
    for subpath in subkeys:
        last = subpath.rsplit("/", 1)[-1]
        if subpath.startswith("subagents/") and last.startswith(AGENT_PREFIX):
            agent_id = last.removeprefix(AGENT_PREFIX)
            if agent_id not in ids:
                ids.append(agent_id)
    return ids


# The official signature, positional parameters and all.
async def get_subagent_messages_from_store(store: SessionStore, session_id: str,  # noqa: PLR0917
                                           agent_id: str, directory: str | None = None,
                                           limit: int | None = None, offset: int = 0
                                           ) -> list[SessionMessage]:
    """A subagent's messages; its `agent_metadata` entry names the tool call that
    started it."""
    if not paths.is_uuid(session_id) or not agent_id:
        return []
    subpath = f"subagents/{AGENT_PREFIX}{agent_id}"
    if _implements(store, "list_subkeys"):
        key = _key(session_id, directory)
        subkeys = await store.list_subkeys({"project_key": key["project_key"],
                                            "session_id": session_id})
        subpath = next((s for s in subkeys if s.startswith("subagents/")
                        and s.rsplit("/", 1)[-1] == AGENT_PREFIX + agent_id), subpath)
    entries = await store.load(_key(session_id, directory, subpath))
    if not entries:
        return []
    meta = next((e for e in reversed(entries) if e.get("type") == "agent_metadata"), None)
    return _messages(entries, limit, offset, _parents(meta))


# Changing sessions in a store ----------------------------------------------------------------


async def rename_session_via_store(store: SessionStore, session_id: str, title: str,
                                   directory: str | None = None) -> None:
    cleaned = title.strip()
    if not paths.is_uuid(session_id) or not cleaned:
        raise ValueError("rename needs a session uuid and a non-empty title")
    await store.append(_key(session_id, directory), [
        {"type": "custom-title", "customTitle": cleaned, "sessionId": session_id}])


async def tag_session_via_store(store: SessionStore, session_id: str, tag: str | None,
                                directory: str | None = None) -> None:
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    await store.append(_key(session_id, directory), [
        {"type": "tag", "tag": (tag or "").strip(), "sessionId": session_id}])


async def delete_session_via_store(store: SessionStore, session_id: str,
                                   directory: str | None = None) -> None:
    if not _implements(store, "delete"):
        raise ValueError("session_store does not implement delete()")
    await store.delete(_key(session_id, directory))


async def fork_session_via_store(store: SessionStore, session_id: str,
                                 directory: str | None = None,
                                 up_to_message_id: str | None = None,
                                 title: str | None = None) -> ForkSessionResult:
    """A copy of the session's main chain under a new id, every line with a fresh uuid
    and `forkedFrom`, as `fork_session` writes one on disk."""
    entries = await store.load(_key(session_id, directory))
    chain = [e for e in conversation_chain(_chain_lines(entries or []))
             if not e.get("isSidechain")]
    if up_to_message_id is not None:
        cut = next((i for i, e in enumerate(chain) if e.get("uuid") == up_to_message_id), None)
        if cut is None:
            raise ValueError(f"Message {up_to_message_id} not found in session {session_id}")
        chain = chain[:cut + 1]
    if not chain:
        raise ValueError(f"Session {session_id} has no messages to fork")
    fork_id, parent, lines = new_uuid(), None, []
    for entry in chain:
        fresh = new_uuid()
        lines.append({**entry, "uuid": fresh, "parentUuid": parent, "sessionId": fork_id,
                      "forkedFrom": {"sessionId": session_id, "messageUuid": entry.get("uuid")}})
        parent = fresh
    lines[-1]["timestamp"] = iso_now()
    lines.append({"type": "custom-title", "customTitle": title or "Forked session (fork)",
                  "sessionId": fork_id})
    await store.append(_key(fork_id, directory), lines)
    return ForkSessionResult(session_id=fork_id)


async def import_session_to_store(session_id: str, store: SessionStore, *,
                                  directory: str | None = None, include_subagents: bool = True,
                                  batch_size: int = IMPORT_BATCH) -> None:
    """Copies a session on disk (and its subagents', with their metadata as an
    `agent_metadata` entry) into the store, under the key a live mirror would use."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    found = session_file(session_id, directory)
    if found is None:
        raise FileNotFoundError(f"Session {session_id} not found")
    path = found[0]
    key: SessionKey = {"project_key": path.parent.name, "session_id": session_id}
    await _import_file(store, key, path, batch_size if batch_size > 0 else IMPORT_BATCH)
    folder = path.with_suffix("") / "subagents"
    if not include_subagents or not folder.is_dir():
        return
    for agent in sorted(folder.rglob(f"{AGENT_PREFIX}*.jsonl")):
        subpath = str(agent.relative_to(path.with_suffix(""))).removesuffix(".jsonl")
        sub: SessionKey = {**key, "subpath": subpath}
        await _import_file(store, sub, agent, batch_size)
        meta = _read_meta(agent)
        if meta is not None:
            await store.append(sub, [{**meta, "type": "agent_metadata"}])


async def _import_file(store: SessionStore, key: SessionKey, path: Path, batch: int) -> None:
    pending: list[SessionStoreEntry] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                pending.append(json.loads(line))
            if len(pending) >= batch:
                await store.append(key, pending)
                pending = []
    if pending:
        await store.append(key, pending)


def _read_meta(agent: Path) -> JSON | None:
    try:
        meta = json.loads(agent.with_suffix(".meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


# Subagents on disk ---------------------------------------------------------------------------


def _agent_files(session_id: str, directory: str | None) -> list[tuple[str, Path]]:
    found = session_file(session_id, directory) if paths.is_uuid(session_id) else None
    if found is None:
        return []
    folder = found[0].with_suffix("") / "subagents"
    return [(p.name.removeprefix(AGENT_PREFIX).removesuffix(".jsonl"), p)
            for p in sorted(folder.rglob(f"{AGENT_PREFIX}*.jsonl"))] if folder.is_dir() else []


def list_subagents(session_id: str, directory: str | None = None) -> list[str]:
    """The ids of the session's subagents (`<session>/subagents/agent-<id>.jsonl`)."""
    return [agent_id for agent_id, _ in _agent_files(session_id, directory)]


def get_subagent_messages(session_id: str, agent_id: str, directory: str | None = None,
                          limit: int | None = None, offset: int = 0) -> list[SessionMessage]:
    """A subagent's messages, each naming the tool call that started it (from the
    `agent-<id>.meta.json` beside its transcript)."""
    from wisp.sessions.load import read_entries

    match = next((p for found, p in _agent_files(session_id, directory) if found == agent_id),
                 None)
    if match is None:
        return []
    try:
        entries = read_entries(match)
    except OSError:
        return []
    return _messages(entries, limit, offset, _parents(_read_meta(match)))
