"""Helpers shared by the file tools (Read, Write, Edit, Glob, Grep)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# How much of a file we sniff for NUL bytes when deciding it is binary (same as git/grep).
BINARY_SNIFF_BYTES = 8192

# Directories that are never worth walking into when searching a tree.
PRUNED_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", "node_modules"})


def resolve_path(cwd: Path, raw: str) -> Path:
    """An absolute, normalised path; relative input resolves against the session's cwd.

    Symlinks are deliberately not resolved, so results name the path the model gave.
    """
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        path = cwd / path
    return Path(os.path.normpath(path))


def readable(text: str) -> str:
    """A path (or a line naming one) as the model and the wire may see it. A file name
    that is not UTF-8 reaches Python with lone surrogates (surrogateescape), which no
    JSON writer or API accepts; its undecodable bytes are shown as U+FFFD instead, as
    Bash shows undecodable output. Keep the real path for anything that opens the file."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "replace")
    return text


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def cat_n(lines: Iterable[str], start: int) -> str:
    """Number lines the way `cat -n` does, so the model can cite line numbers."""
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start))


def _read_files(state: dict[str, Any]) -> dict[str, float]:
    files: dict[str, float] = state.setdefault("read_files", {})
    return files


def record_read(state: dict[str, Any], path: Path) -> None:
    """Remember that the model has seen this version of the file."""
    with contextlib.suppress(OSError):
        _read_files(state)[str(path)] = path.stat().st_mtime


def stale_write_problem(state: dict[str, Any], path: Path) -> str | None:
    """Why overwriting `path` would be blind, or None.

    Only enforced when the session opts in with `state["require_read_before_edit"] = True`,
    since scripted sessions and tests often write files they never read.
    """
    if not state.get("require_read_before_edit") or not path.exists():
        return None
    seen = _read_files(state).get(str(path))
    if seen is None:
        return f"File has not been read yet: {path}. Read it first before writing to it."
    try:
        if path.stat().st_mtime > seen:
            return (
                f"File has been modified since it was last read: {path}. "
                "Read it again before writing to it."
            )
    except OSError:
        return None
    return None


def pruned(dirnames: list[str], pattern: str = "") -> list[str]:
    """Drop VCS and dependency directories, unless the pattern names one explicitly."""
    return [d for d in dirnames if d not in PRUNED_DIRS or d in pattern]
