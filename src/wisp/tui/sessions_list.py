"""This project's sessions for /resume: newest first, each with when it was last written
and its title (/rename, `rename_session`) or else its first prompt, read from the same
transcripts print mode and the SDKs use."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

from wisp import paths
from wisp.sessions.resume import title_of

SCAN_LINES = 50  # lines read from the top of a transcript to find its first prompt
SEARCH_BYTES = 256 * 1024  # of a transcript's start, searched for the words typed
PREVIEW_BYTES = 64 * 1024  # of a transcript's end, read for the preview


class SessionRow:
    __slots__ = ("_words", "modified", "path", "prompt", "session_id", "title")

    def __init__(self, session_id: str, modified: float, prompt: str,
                 title: str | None = None, path: Path | None = None) -> None:
        self.session_id = session_id
        self.modified = modified
        self.prompt = prompt
        self.title = title
        self.path = path
        self._words: str | None = None

    def words(self) -> str:
        """What a search looks in, folded: the id, the title and the user's prompts (of
        the transcript's first SEARCH_BYTES), read once, when the first key is typed."""
        if self._words is None:
            prompts = _prompts(self.path) if self.path is not None else [self.prompt]
            self._words = " ".join([self.session_id, self.title or "", *prompts]).casefold()
        return self._words

    def label(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.modified))
        named = self.title or self.prompt[:60] or "(no prompt)"
        return f"{when}  {named}  · {self.session_id[:8]}"


def project_sessions(env: Mapping[str, str], cwd: Path, exclude: str = "") -> list[SessionRow]:
    folder = paths.project_dir(env, cwd)
    rows = []
    try:
        files = [p for p in folder.glob("*.jsonl") if paths.is_uuid(p.stem) and p.stem != exclude]
    except OSError:
        return []
    for path in files:
        try:
            modified = path.stat().st_mtime
        except OSError:
            continue
        prompt = _first_prompt(path)
        if prompt is not None:
            rows.append(SessionRow(path.stem, modified, prompt, title_of(path), path))
    return sorted(rows, key=lambda r: r.modified, reverse=True)


def matching(rows: list[SessionRow], words: str) -> list[SessionRow]:
    """The session whose id starts with `words`, else those whose title or first prompt
    holds them (any case), newest first."""
    wanted = words.strip()
    by_id = [r for r in rows if r.session_id.startswith(wanted)]
    if by_id:
        return by_id
    folded = wanted.casefold()
    return [r for r in rows
            if folded in r.prompt.casefold() or folded in (r.title or "").casefold()]


def search(rows: list[SessionRow], query: str) -> list[SessionRow]:
    """The rows holding every word of `query` (any case) in their id, title or prompts."""
    words = query.casefold().split()
    return [r for r in rows if all(w in r.words() for w in words)] if words else rows


def preview(path: Path | None, count: int) -> list[tuple[str, str]]:
    """The last `count` messages of a transcript as (who, text): "user" for a prompt,
    "assistant" for an answer's text (tool calls and results are left out), read from
    its last PREVIEW_BYTES."""
    if path is None:
        return []
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - PREVIEW_BYTES))
            tail = handle.read().decode("utf-8", "replace").split("\n")
    except OSError:
        return []
    found: list[tuple[str, str]] = []
    for line in reversed(tail[1:] if size > PREVIEW_BYTES else tail):
        said = _said(line)
        if said is not None:
            found.append(said)
            if len(found) == count:
                break
    return found[::-1]


def _said(line: str) -> tuple[str, str] | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    text = _text_of((entry.get("message") or {}).get("content"))
    return (str(entry["type"]), text.strip()) if text and text.strip() else None


def _prompts(path: Path) -> list[str]:
    try:
        with path.open("rb") as handle:
            head = handle.read(SEARCH_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    return [t for t in map(_user_text, head.split("\n")) if t]


def _first_prompt(path: Path) -> str | None:
    """The first user text of a transcript; None for one without a conversation."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for _, line in zip(range(SCAN_LINES), handle, strict=False):
                text = _user_text(line)
                if text is not None:
                    return text.replace("\n", " ")
    except OSError:
        return None
    return None


def _user_text(line: str) -> str | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return None
    return _text_of((entry.get("message") or {}).get("content"))


def _text_of(content: object) -> str | None:
    """A message's text: the string, or its text blocks joined (None when it has none:
    a tool result, a tool call)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(b.get("text", "")) for b in content
                 if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(texts) if texts else None
    return None
