"""Reading (and renaming, tagging, deleting) the sessions wisp keeps on disk, with the
official SDK's session helpers' signatures and answers.

The store is wisp's own (`wisp.paths`): `<config dir>/projects/<project key>/
<session id>.jsonl`, the config dir being `CLAUDE_CONFIG_DIR`, else `WISP_CONFIG_DIR`, else
`~/.claude` (Claude Code's own). The files are in Claude Code's line format, so everything
here reads Claude Code's transcripts too when the two share a config dir.

Listing stays cheap: a session's metadata comes from its size, its mtime and the first and
last 64 KiB of the file, searched as text rather than parsed, as the official SDK does.
Only `get_session_messages` reads a whole file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wisp import paths
from wisp.jsontypes import JSON
from wisp.sdk._session_chain import CHAIN_TYPES, conversation_chain, is_visible
from wisp.sdk._session_files import (
    Lite,
    candidate_dirs,
    canonical,
    epoch_ms,
    first_field,
    first_prompt,
    last_field,
    project_dir,
    projects_root,
    read_lite,
    session_file,
    worktrees,
)
from wisp.sessions.load import read_entries
from wisp.stamps import iso_now, new_uuid

# How much of a file's head and of its tail a listing reads.
LITE_READ_BUF_SIZE = 64 * 1024
FIRST_PROMPT_MAX = 200
GIT_TIMEOUT_SECONDS = 5


@dataclass
class SDKSessionInfo:
    """One session as `list_sessions` and `get_session_info` describe it. Times are
    milliseconds since the epoch; `summary` is the title, else the latest prompt or summary
    recorded, else the first prompt."""

    session_id: str
    summary: str
    last_modified: int
    file_size: int | None = None
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None


@dataclass
class SessionMessage:
    """A user or assistant line of a session's conversation; `message` is the API message
    as stored. The parent fields are only set for subagent messages."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: Any
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


# Where sessions are --------------------------------------------------------------------------


def _info(session_id: str, lite: Lite, project_path: str | None) -> SDKSessionInfo | None:
    """None for a subagent's transcript and for one with nothing to call it by."""
    head, tail = lite.head, lite.tail
    first_line = head.split("\n", 1)[0]
    if '"isSidechain":true' in first_line or '"isSidechain": true' in first_line:
        return None
    title = (
        last_field(tail, "customTitle") or last_field(head, "customTitle")
        or last_field(tail, "aiTitle") or last_field(head, "aiTitle") or None
    )
    prompt = first_prompt(head) or None
    summary = (
        title or last_field(tail, "lastPrompt") or last_field(tail, "summary") or prompt
    )
    if not summary:
        return None
    # Only a line that is a tag entry: "tag" is a common key in tool inputs.
    tag_line = next((ln for ln in reversed(tail.split("\n")) if ln.startswith('{"type":"tag"')),
                    None)
    return SDKSessionInfo(
        session_id=session_id,
        summary=summary,
        last_modified=lite.mtime,
        file_size=lite.size,
        custom_title=title,
        first_prompt=prompt,
        git_branch=last_field(tail, "gitBranch") or first_field(head, "gitBranch") or None,
        cwd=first_field(head, "cwd") or project_path or None,
        tag=(last_field(tag_line, "tag") or None) if tag_line else None,
        created_at=epoch_ms(first_field(head, "timestamp")),
    )


def _sessions_in(project: Path, project_path: str | None) -> list[SDKSessionInfo]:
    try:
        files = list(project.iterdir())
    except OSError:
        return []
    found = []
    for path in files:
        stem = path.name.removesuffix(".jsonl")
        if stem == path.name or not paths.is_uuid(stem):
            continue
        lite = read_lite(path)
        info = _info(stem, lite, project_path) if lite is not None else None
        if info is not None:
            found.append(info)
    return found


def _newest_per_id(sessions: list[SDKSessionInfo]) -> list[SDKSessionInfo]:
    newest: dict[str, SDKSessionInfo] = {}
    for info in sessions:
        kept = newest.get(info.session_id)
        if kept is None or info.last_modified > kept.last_modified:
            newest[info.session_id] = info
    return list(newest.values())


def _page(sessions: list[SDKSessionInfo], limit: int | None, offset: int) -> list[SDKSessionInfo]:
    sessions.sort(key=lambda s: s.last_modified, reverse=True)
    if offset > 0:
        sessions = sessions[offset:]
    if limit is not None and limit > 0:
        sessions = sessions[:limit]
    return sessions


def _project_sessions(directory: str, include_worktrees: bool) -> list[SDKSessionInfo]:
    folder = canonical(directory)
    trees = worktrees(folder) if include_worktrees else []
    if len(trees) <= 1:
        own = project_dir(folder)
        return _sessions_in(own, folder) if own is not None else []
    root = projects_root()
    try:
        projects = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        own = project_dir(folder)
        return _sessions_in(own, folder) if own is not None else []
    # The most specific worktree first, so a nested worktree is not taken for its parent.
    keyed = sorted(((paths.project_key(t), t) for t in trees), key=lambda kt: -len(kt[0]))
    found: list[SDKSessionInfo] = []
    seen: set[str] = set()
    own = project_dir(folder)  # a subdirectory of a worktree has its own sessions
    if own is not None:
        seen.add(own.name)
        found.extend(_sessions_in(own, folder))
    for project in projects:
        if project.name in seen:
            continue
        for key, tree in keyed:
            long_key = len(key) >= paths.MAX_SANITIZED_LENGTH
            if project.name == key or (long_key and project.name.startswith(key + "-")):
                seen.add(project.name)
                found.extend(_sessions_in(project, tree))
                break
    return _newest_per_id(found)


def list_sessions(
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    include_worktrees: bool = True,
) -> list[SDKSessionInfo]:
    """Sessions, most recently written first: those of `directory` (and of the other
    worktrees of its git repository, unless `include_worktrees` is False), or of every
    project when no directory is given. `offset` and `limit` page through the result."""
    if directory:
        found = _project_sessions(directory, include_worktrees)
    else:
        try:
            projects = [d for d in projects_root().iterdir() if d.is_dir()]
        except OSError:
            projects = []
        found = _newest_per_id([s for p in projects for s in _sessions_in(p, None)])
    return _page(found, limit, offset)


def get_session_info(session_id: str, directory: str | None = None) -> SDKSessionInfo | None:
    """One session's metadata, looked up where `get_session_messages` looks; None when it
    is not found, is a subagent's, or has nothing to call it by."""
    if not paths.is_uuid(session_id):
        return None
    for project, project_path in candidate_dirs(directory):
        lite = read_lite(project / f"{session_id}.jsonl")
        if lite is not None:
            return _info(session_id, lite, project_path)
    return None


# The conversation ---------------------------------------------------------------------------

def get_session_messages(
    session_id: str,
    directory: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """The user and assistant messages of a session's main conversation, oldest first
    (a parallel tool turn whole); [] when the session is not found. `offset` and `limit`
    page through them."""
    if not paths.is_uuid(session_id):
        return []
    found = session_file(session_id, directory)
    if found is None:
        return []
    try:
        entries = read_entries(found[0])
    except OSError:
        return []
    messages = [
        SessionMessage(
            type="user" if e.get("type") == "user" else "assistant",
            uuid=e.get("uuid", ""),
            session_id=e.get("sessionId", ""),
            message=e.get("message"),
        )
        for e in conversation_chain(entries)
        if is_visible(e)
    ]
    if limit is not None and limit > 0:
        return messages[offset : offset + limit]
    return messages[offset:] if offset > 0 else messages


# Changing sessions --------------------------------------------------------------------------


def _append(session_id: str, line: JSON, directory: str | None) -> None:
    """Appends one metadata line to the session's transcript, in one write, starting a new
    line first if the file ends in a torn one. Never creates a file."""
    data = json.dumps(line, separators=(",", ":")) + "\n"
    for project, _ in candidate_dirs(directory):
        try:
            # No O_CREAT: a missing file fails here instead of being made.
            fd = os.open(project / f"{session_id}.jsonl", os.O_RDWR | os.O_APPEND)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
                continue
            raise
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                continue  # an empty file is not the session
            torn = os.pread(fd, 1, size - 1) != b"\n"
            os.write(fd, (("\n" if torn else "") + data).encode("utf-8"))
            return
        finally:
            os.close(fd)
    where = f"in project directory for {directory}" if directory else "in any project directory"
    raise FileNotFoundError(f"Session {session_id} not found {where}")


def rename_session(session_id: str, title: str, directory: str | None = None) -> None:
    """Sets the session's title (the last one set wins). Raises ValueError for a bad id or
    an empty title, FileNotFoundError when the session is not found."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    stripped = title.strip()
    if not stripped:
        raise ValueError("title must be non-empty")
    _append(
        session_id,
        {"type": "custom-title", "customTitle": stripped, "sessionId": session_id},
        directory,
    )


# Invisible or direction-changing characters a tag must not hide.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\ue000-\uf8ff]")
_FORMAT_CATEGORIES = frozenset({"Cf", "Co", "Cn"})


def _clean_tag(tag: str) -> str:
    text = tag
    for _ in range(10):  # NFKC can expose more to strip; stop once nothing changes
        cleaned = unicodedata.normalize("NFKC", text)
        cleaned = "".join(c for c in cleaned if unicodedata.category(c) not in _FORMAT_CATEGORIES)
        cleaned = _INVISIBLE.sub("", cleaned)
        if cleaned == text:
            break
        text = cleaned
    return text.strip()


def tag_session(session_id: str, tag: str | None, directory: str | None = None) -> None:
    """Sets the session's tag, or clears it with None (the last one set wins)."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if tag is not None:
        tag = _clean_tag(tag)
        if not tag:
            raise ValueError("tag must be non-empty (use None to clear)")
    # The type must come first: listings find tag lines by their opening.
    _append(session_id, {"type": "tag", "tag": tag or "", "sessionId": session_id}, directory)


def delete_session(session_id: str, directory: str | None = None) -> None:
    """Removes the session's transcript and its directory of subagent transcripts."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    found = session_file(session_id, directory)
    if found is None:
        where = f" in project directory for {directory}" if directory else ""
        raise FileNotFoundError(f"Session {session_id} not found{where}")
    path = found[0]
    try:
        path.unlink()
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"Session {session_id} not found") from exc
    shutil.rmtree(path.parent / session_id, ignore_errors=True)


@dataclass
class ForkSessionResult:
    """What `fork_session` made: the new session's id."""

    session_id: str


_FORK_DROPPED_KEYS = ("teamName", "agentName", "slug", "sourceToolAssistantUUID")


def fork_session(
    session_id: str,
    directory: str | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
) -> ForkSessionResult:
    """Copies a session's main thread (up to and including `up_to_message_id`) into a new
    session beside it, every line under a new uuid, and titles the copy: `title`, else the
    source's title or first prompt followed by " (fork)"."""
    if not paths.is_uuid(session_id):
        raise ValueError(f"Invalid session_id: {session_id}")
    if up_to_message_id and not paths.is_uuid(up_to_message_id):
        raise ValueError(f"Invalid up_to_message_id: {up_to_message_id}")
    found = session_file(session_id, directory)
    if found is None:
        where = f" in project directory for {directory}" if directory else ""
        raise FileNotFoundError(f"Session {session_id} not found{where}")
    source = found[0]
    raw = source.read_bytes()
    entries, replacements = _fork_source(raw, session_id)
    new_id = new_uuid()
    lines = _forked_lines(entries, session_id, new_id, up_to_message_id)
    now = iso_now()
    if replacements:
        lines.append({"type": "content-replacement", "sessionId": new_id,
                      "replacements": replacements, "uuid": new_uuid(), "timestamp": now})
    name = title.strip() if title else ""
    if not name:
        head = raw[:LITE_READ_BUF_SIZE].decode("utf-8", errors="replace")
        tail = raw[-LITE_READ_BUF_SIZE:].decode("utf-8", errors="replace")
        derived = (
            last_field(tail, "customTitle") or last_field(head, "customTitle")
            or last_field(tail, "aiTitle") or last_field(head, "aiTitle")
            or first_prompt(head)
        )
        name = f"{derived or 'Forked session'} (fork)"
    lines.append({"type": "custom-title", "sessionId": new_id, "customTitle": name,
                  "uuid": new_uuid(), "timestamp": now})
    data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    fd = os.open(source.parent / f"{new_id}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data.encode("utf-8"))
    finally:
        os.close(fd)
    return ForkSessionResult(new_id)


def _fork_source(raw: bytes, session_id: str) -> tuple[list[JSON], list[Any]]:
    """The main thread's chain lines, and the session's content replacements."""
    entries: list[JSON] = []
    replacements: list[Any] = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind in CHAIN_TYPES and isinstance(entry.get("uuid"), str):
            if not entry.get("isSidechain"):
                entries.append(entry)
        elif (kind == "content-replacement" and entry.get("sessionId") == session_id
              and isinstance(entry.get("replacements"), list)):
            replacements.extend(entry["replacements"])
    return entries, replacements


def _forked_lines(
    entries: list[JSON], session_id: str, new_id: str, up_to: str | None
) -> list[JSON]:
    """The copied lines under new uuids. Progress lines are left out and their children
    re-linked to the nearest kept ancestor; the last line is stamped now, which is how a
    resume finds the leaf."""
    if up_to:
        cut = next((i for i, e in enumerate(entries) if e["uuid"] == up_to), None)
        if cut is None:
            raise ValueError(f"Message {up_to} not found in session {session_id}")
        entries = entries[: cut + 1]
    kept = [e for e in entries if e.get("type") != "progress"]
    if not kept:
        raise ValueError(f"Session {session_id} has no messages to fork")
    renamed = {e["uuid"]: new_uuid() for e in entries}
    by_uuid = {e["uuid"]: e for e in entries}
    now = iso_now()
    lines: list[JSON] = []
    for index, entry in enumerate(kept):
        parent = entry.get("parentUuid")
        while parent and (above := by_uuid.get(parent)) is not None:
            if above.get("type") != "progress":
                break
            parent = above.get("parentUuid")
        else:
            parent = None  # no kept ancestor in the copy
        logical = entry.get("logicalParentUuid")
        copy = {
            **entry,
            "uuid": renamed[entry["uuid"]],
            "parentUuid": renamed.get(parent) if parent else None,
            "logicalParentUuid": renamed.get(logical) if logical else logical,
            "sessionId": new_id,
            "timestamp": now if index == len(kept) - 1 else entry.get("timestamp", now),
            "isSidechain": False,
            "forkedFrom": {"sessionId": session_id, "messageUuid": entry["uuid"]},
        }
        for key in _FORK_DROPPED_KEYS:
            copy.pop(key, None)
        lines.append(copy)
    return lines


__all__ = [
    "ForkSessionResult",
    "SDKSessionInfo",
    "SessionMessage",
    "delete_session",
    "fork_session",
    "get_session_info",
    "get_session_messages",
    "list_sessions",
    "rename_session",
    "tag_session",
]
