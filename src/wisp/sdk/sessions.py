"""Reading (and renaming, tagging, deleting) the sessions wisp keeps on disk, with the
official SDK's session helpers' signatures and answers.

The store is wisp's own (`wisp.paths`): `<config dir>/projects/<project key>/
<session id>.jsonl`, the config dir being `CLAUDE_CONFIG_DIR`, else `WISP_CONFIG_DIR`, else
`~/.claude` (Claude Code's own). The files are in Claude Code's line format, so everything
here reads Claude Code's transcripts too when the two share a config dir.

Listing stays cheap: a session's metadata comes from its size, its mtime and the first and
last 64 KiB of the file, searched as text rather than parsed, as the official SDK does.
Only `get_session_messages` reads a whole file. Renaming, tagging and deleting are in
`wisp.sdk._session_edits`, forking in `wisp.sdk._session_fork`; their names are public here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wisp import paths
from wisp.sdk._session_chain import conversation_chain, is_visible
from wisp.sdk._session_edits import delete_session, rename_session, tag_session
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
from wisp.sdk._session_fork import ForkSessionResult, fork_session
from wisp.sessions.load import read_entries


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


def info_from_lite(session_id: str, lite: Lite, project_path: str | None) -> SDKSessionInfo | None:
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
        info = info_from_lite(stem, lite, project_path) if lite is not None else None
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
            return info_from_lite(session_id, lite, project_path)
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
