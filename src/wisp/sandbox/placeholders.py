"""Placeholders for protected paths that do not exist yet.

A mount needs something to mount on. To make creating `.mcp.json` or `.git/hooks` fail
inside the sandbox, the first missing component of the path is created on the host as an
empty file, and /dev/null is mounted over it in the sandbox: there it is a character
device, and `mkdir -p .git/hooks` or `echo > .mcp.json` fail. When the last command that
needs a placeholder ends, it is removed again, but only if it is still the empty file this
process made (same inode): nothing is left behind on the host.

Commands of one process share placeholders (counted); another wisp process working in
the same folder at the same moment may see one briefly (docs/sandbox.md).
"""

from __future__ import annotations

import contextlib
import os
import threading

_LOCK = threading.Lock()
_HELD: dict[str, tuple[int, int, int]] = {}  # path → (refcount, st_dev, st_ino)


def acquire(path: str) -> bool:
    """Takes (or shares) the placeholder at `path`; False if something else is there."""
    with _LOCK:
        held = _HELD.get(path)
        if held is not None:
            _HELD[path] = (held[0] + 1, held[1], held[2])
            return True
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o000)
        except OSError:
            return False
        try:
            stat = os.fstat(fd)
        finally:
            os.close(fd)
        _HELD[path] = (1, stat.st_dev, stat.st_ino)
        return True


def release(path: str) -> None:
    with _LOCK:
        held = _HELD.get(path)
        if held is None:
            return
        if held[0] > 1:
            _HELD[path] = (held[0] - 1, held[1], held[2])
            return
        del _HELD[path]
        with contextlib.suppress(OSError):
            stat = os.lstat(path)
            if (stat.st_dev, stat.st_ino) == held[1:] and stat.st_size == 0:
                os.unlink(path)


def release_all() -> None:
    """At exit: whatever is still held (a command cut short) goes."""
    for path in list(_HELD):
        while path in _HELD:
            release(path)


def is_held(path: str) -> bool:
    """Whether `path` is a placeholder of this process (a command running now holds it)."""
    return path in _HELD


def held() -> list[str]:
    return sorted(_HELD)
