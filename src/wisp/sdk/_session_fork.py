"""Forking a session kept on disk (`wisp.sdk.sessions`): its main thread copied into a
new session beside it, every line under a new uuid, the copy titled.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from wisp import paths
from wisp.jsontypes import JSON
from wisp.sdk._session_chain import CHAIN_TYPES
from wisp.sdk._session_files import LITE_READ_BUF_SIZE, first_prompt, last_field, session_file
from wisp.stamps import iso_now, new_uuid


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


__all__ = ["ForkSessionResult", "fork_session"]
