"""Changing a session kept on disk (`wisp.sdk.sessions`): its title, its tag, or the
session itself gone. Titles and tags are metadata lines appended to the transcript (the
last one written wins); nothing here creates a transcript.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import unicodedata

from wisp import paths
from wisp.jsontypes import JSON
from wisp.sdk._session_files import candidate_dirs, session_file


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


__all__ = ["delete_session", "rename_session", "tag_session"]
