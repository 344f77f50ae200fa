"""Finding a session's transcript file and reading what a listing needs from it cheaply:
the first and last 64 KiB, searched as text (titles, tags, prompts, timestamps) rather
than parsed, as the official SDK does.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import unicodedata
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from wisp import paths

# How much of a file's head and of its tail a listing reads.
LITE_READ_BUF_SIZE = 64 * 1024
FIRST_PROMPT_MAX = 200
GIT_TIMEOUT_SECONDS = 5


def projects_root() -> Path:
    return paths.projects_root(os.environ)


def canonical(directory: str | os.PathLike[str]) -> str:
    try:
        resolved = os.path.realpath(directory)
    except OSError:
        resolved = os.fspath(directory)
    return unicodedata.normalize("NFC", resolved)


def project_dir(project_path: str) -> Path | None:
    """The store directory of a project. A long path's key ends in a hash, which other
    writers may compute differently: then any directory with the same cut-off prefix."""
    key = paths.project_key(project_path)
    root = projects_root()
    if (root / key).is_dir():
        return root / key
    if len(key) <= paths.MAX_SANITIZED_LENGTH:
        return None
    prefix = key[: paths.MAX_SANITIZED_LENGTH] + "-"
    try:
        return next((d for d in root.iterdir() if d.is_dir() and d.name.startswith(prefix)), None)
    except OSError:
        return None


def worktrees(cwd: str) -> list[str]:
    """The git worktrees of the repository holding `cwd` (none outside a repository)."""
    try:
        proc = subprocess.run(
            ["git", "worktree", "list", "--porcelain"], cwd=cwd, capture_output=True,
            text=True, timeout=GIT_TIMEOUT_SECONDS, check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    if proc.returncode != 0:
        return []
    return [
        unicodedata.normalize("NFC", line.removeprefix("worktree "))
        for line in proc.stdout.split("\n")
        if line.startswith("worktree ")
    ]


def candidate_dirs(directory: str | None) -> Iterator[tuple[Path, str | None]]:
    """Where a session of `directory` may be, in search order, each with the project path
    it stands for: the project's own directory, then its worktrees'; every project when no
    directory is given."""
    if not directory:
        try:
            entries = list(projects_root().iterdir())
        except OSError:
            return
        for entry in entries:
            yield entry, None
        return
    folder = canonical(directory)
    found = project_dir(folder)
    if found is not None:
        yield found, folder
    for tree in worktrees(folder):
        if tree != folder:
            other = project_dir(tree)
            if other is not None:
                yield other, tree


def session_file(session_id: str, directory: str | None) -> tuple[Path, str | None] | None:
    """The first non-empty transcript of the session, and its project path."""
    for project, project_path in candidate_dirs(directory):
        path = project / f"{session_id}.jsonl"
        try:
            if path.stat().st_size > 0:
                return path, project_path
        except OSError:
            continue
    return None


# Metadata from a file's head and tail ------------------------------------------------------


class Lite(NamedTuple):
    mtime: int
    size: int
    head: str
    tail: str


def read_lite(path: Path) -> Lite | None:
    try:
        with path.open("rb") as f:
            st = os.fstat(f.fileno())
            head_bytes = f.read(LITE_READ_BUF_SIZE)
            if not head_bytes:
                return None
            head = head_bytes.decode("utf-8", errors="replace")
            tail = head
            if st.st_size > LITE_READ_BUF_SIZE:
                f.seek(st.st_size - LITE_READ_BUF_SIZE)
                tail = f.read(LITE_READ_BUF_SIZE).decode("utf-8", errors="replace")
            return Lite(int(st.st_mtime * 1000), st.st_size, head, tail)
    except OSError:
        return None


def _field_pattern(key: str) -> re.Pattern[str]:
    # "key":"value" (or with one space after the colon), the value up to its closing quote.
    return re.compile('"' + re.escape(key) + r'": ?"([^"\\]*(?:\\.[^"\\]*)*)"', re.DOTALL)


_FIELD_PATTERNS: dict[str, re.Pattern[str]] = {}


def _field_values(text: str, key: str) -> Iterator[str]:
    """Every string value of `key` in raw JSONL text, in order; text may be cut mid-line."""
    pattern = _FIELD_PATTERNS.get(key)
    if pattern is None:
        pattern = _FIELD_PATTERNS[key] = _field_pattern(key)
    for match in pattern.finditer(text):
        raw = match.group(1)
        if "\\" not in raw:
            yield raw
            continue
        try:
            value = json.loads(f'"{raw}"')
        except ValueError:
            value = raw
        yield value if isinstance(value, str) else raw


def first_field(text: str, key: str) -> str | None:
    return next(_field_values(text, key), None)


def last_field(text: str, key: str) -> str | None:
    last = None
    for last in _field_values(text, key):  # noqa: B007 (the loop keeps the last)
        pass
    return last


# User lines that are not a prompt someone typed.
_NOT_A_PROMPT = re.compile(
    r"^(?:<local-command-stdout>|<session-start-hook>|<tick>|<goal>"
    r"|\[Request interrupted by user[^\]]*\]"
    r"|\s*<ide_opened_file>[\s\S]*</ide_opened_file>\s*$"
    r"|\s*<ide_selection>[\s\S]*</ide_selection>\s*$)"
)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>")
_USER_MARKS = ('"type":"user"', '"type": "user"')
_SKIPPED_MARKS = (
    '"tool_result"', '"isMeta":true', '"isMeta": true',
    '"isCompactSummary":true', '"isCompactSummary": true',
)


def _user_texts(line: str) -> list[str]:
    if not any(m in line for m in _USER_MARKS) or any(m in line for m in _SKIPPED_MARKS):
        return []
    try:
        entry = json.loads(line)
    except ValueError:
        return []
    if not isinstance(entry, dict) or entry.get("type") != "user":
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"] for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def first_prompt(head: str) -> str:
    """The first prompt a person typed, on one line and cut to 200 characters; else the
    name of the first slash command; else ""."""
    command = ""
    for line in head.split("\n"):
        for raw in _user_texts(line):
            text = raw.replace("\n", " ").strip()
            if not text:
                continue
            named = _COMMAND_NAME.search(text)
            if named:
                command = command or named.group(1)
                continue
            if _NOT_A_PROMPT.match(text):
                continue
            if len(text) > FIRST_PROMPT_MAX:
                text = text[:FIRST_PROMPT_MAX].rstrip() + "…"
            return text
    return command


def epoch_ms(iso: str | None) -> int | None:
    if not iso:
        return None
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1000)
    except ValueError:
        return None
