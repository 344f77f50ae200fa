"""File checkpoints: what `rewind_files` restores (the SDKs' `enable_file_checkpointing`).

On when `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING` is set, as the SDKs set it. The
layout and the rules are the reference's, so its answers and its backup folder look the
same:

- Before each user message runs, a snapshot names, for every file a tool has written so
  far in the session, the backup holding its state at that moment (a new backup only when
  the file changed since the last one).
- Before a file-writing tool (`kind == "edit"`: Write, Edit, ...) first touches a file in
  a message, its state is kept and the file is tracked from then on. Bash is not tracked:
  a shell command's writes cannot be known in advance (nor does the reference track them).
- Backups are copies under `<config dir>/file-history/<session id>/`, named by the first
  16 hex digits of the SHA-256 of the file's absolute path and a version (`3150…@v2`); a
  file that did not exist has no copy, only the record that it was absent.
- Rewinding to a message restores each tracked file to its state in that message's
  snapshot, or, for a file first written after it, to its state before its first write
  (a file created after the message is deleted).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wisp.jsontypes import JSON

if TYPE_CHECKING:
    from wisp.tools.base import Tool

ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"
NOT_ENABLED = "File rewinding is not enabled."
NOT_FOUND = "No file checkpoint found for this message."
MAX_SNAPSHOTS = 100  # the oldest are forgotten (their backup files stay until cleanup)
_TRUTHY = frozenset({"1", "true", "yes", "on"})


def enabled(env: Mapping[str, str]) -> bool:
    return env.get(ENV, "").strip().lower() in _TRUTHY


class Backup(NamedTuple):
    name: str | None  # the copy's file name; None: the file did not exist then
    version: int
    mode: int | None = None


class Snapshot(NamedTuple):
    message_id: str
    backups: dict[str, Backup]  # by absolute path


class FileHistory:
    """One session's checkpoints. `folder` holds its backup copies."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.snapshots: list[Snapshot] = []
        self.tracked: dict[str, None] = {}  # absolute paths, in the order first written
        self._versions: dict[str, int] = {}

    # Recording -----------------------------------------------------------------------

    def snapshot(self, message_id: str) -> None:
        """A user message is about to run: record the state of every tracked file."""
        backups: dict[str, Backup] = {}
        for path in self.tracked:
            latest = self._latest(path)
            backups[path] = (latest if latest is not None and self._holds(path, latest)
                             else self._backup(path))
        self.snapshots.append(Snapshot(message_id, backups))
        del self.snapshots[:-MAX_SNAPSHOTS]

    def before_tool(self, tool: Tool, tool_input: JSON, cwd: Path) -> None:
        """A tool is about to run: keep the state of each file it will write."""
        if tool.kind != "edit":
            return
        from wisp.tools._fs import resolve_path

        for raw in tool.target_paths(tool_input):
            self.before_write(str(resolve_path(cwd, raw)))

    def before_write(self, path: str) -> None:
        """The first write to `path` in the current message keeps its state before it."""
        if not self.snapshots:
            return  # no user message yet: nothing could be rewound to
        current = self.snapshots[-1].backups
        if path not in current:
            self.tracked[path] = None
            current[path] = self._backup(path)

    # Rewinding -----------------------------------------------------------------------

    def rewind(self, message_id: object, dry_run: bool) -> JSON:
        """The `rewind_files` answer: with `dry_run`, what would change (nothing is
        written); else the files restored. `canRewind: false` and the error when no
        snapshot belongs to `message_id`."""
        snap = next((s for s in reversed(self.snapshots) if s.message_id == message_id), None)
        if snap is None:
            return {"canRewind": False, "error": NOT_FOUND}
        targets = {path: snap.backups.get(path) or self._first(path) for path in self.tracked}
        if dry_run:
            return self._preview(targets)
        skipped = 0
        for path, target in targets.items():
            if target is None or self._holds(path, target):
                continue
            if not self._restore(path, target):
                skipped += 1
        return {"canRewind": True, "skippedLinks": skipped}

    def _preview(self, targets: Mapping[str, Backup | None]) -> JSON:
        changed: list[str] = []
        insertions = deletions = 0
        for path, target in targets.items():
            if target is None or self._holds(path, target):
                continue
            changed.append(path)
            added, removed = _line_changes(_read(Path(path)), self._content(target))
            insertions += added
            deletions += removed
        return {"canRewind": True, "filesChanged": changed, "insertions": insertions,
                "deletions": deletions}

    # Backups -------------------------------------------------------------------------

    def _latest(self, path: str) -> Backup | None:
        return next((s.backups[path] for s in reversed(self.snapshots) if path in s.backups),
                    None)

    def _first(self, path: str) -> Backup | None:
        return next((s.backups[path] for s in self.snapshots if path in s.backups), None)

    def _backup(self, path: str) -> Backup:
        version = self._versions.get(path, 0) + 1
        self._versions[path] = version
        source = Path(path)
        try:
            info = source.stat()
        except OSError:
            return Backup(None, version)
        if not stat.S_ISREG(info.st_mode):
            return Backup(None, version)
        name = f"{_path_key(path)}@v{version}"
        try:
            data = source.read_bytes()
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            copy = self.folder / name
            copy.write_bytes(data)
            copy.chmod(0o600)
        except OSError:
            return Backup(None, version)  # unreadable: rewinding it would lose it, so no
        return Backup(name, version, stat.S_IMODE(info.st_mode))

    def _content(self, backup: Backup) -> bytes | None:
        if backup.name is None:
            return None
        return _read(self.folder / backup.name)

    def _holds(self, path: str, backup: Backup) -> bool:
        """True when `path` is as `backup` recorded it."""
        return _read(Path(path)) == self._content(backup)

    def _restore(self, path: str, target: Backup) -> bool:
        """Puts `target` back at `path`; False when the path is a link or another
        non-regular file, which is left alone (the reference's `skippedLinks`)."""
        file = Path(path)
        try:
            info = file.lstat()
        except OSError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode):
            return False
        if target.name is None:
            with contextlib.suppress(FileNotFoundError):
                file.unlink()
            return True
        data = self._content(target)
        if data is None:
            return True  # the backup is gone: nothing to restore it from
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
        if target.mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(file, target.mode)
        return True


def _path_key(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _read(path: Path) -> bytes | None:
    """The file's bytes; None when it does not exist as a regular file."""
    try:
        if not path.is_file():
            return None
        return path.read_bytes()
    except OSError:
        return None


def _line_changes(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    """(lines added, lines removed) going from `before` to `after`."""
    old = (before or b"").splitlines()
    new = (after or b"").splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new,
                                                        autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed
