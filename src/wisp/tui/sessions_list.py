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


class SessionRow:
    __slots__ = ("modified", "prompt", "session_id", "title")

    def __init__(self, session_id: str, modified: float, prompt: str,
                 title: str | None = None) -> None:
        self.session_id = session_id
        self.modified = modified
        self.prompt = prompt
        self.title = title

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
            rows.append(SessionRow(path.stem, modified, prompt, title_of(path)))
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
    content = (entry.get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                return str(block.get("text", ""))
    return None
